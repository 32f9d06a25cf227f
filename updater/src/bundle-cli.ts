import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildBundle } from './bundle-build.js';
import { keyId } from './signing.js';

const USAGE = `Usage:
  npm run bundle -- --key <ed25519-private.pem> [--version v1.2.3] [--out file.tar.gz]
                    [--from <built tree>] [--data-plane]
  npm run bundle -- keygen <dir>     writes release-key.pem (private) and release-key.pub.pem

The public key goes into the appliance's trusted keys file (docs/updates.md).`;

/** `npm run bundle`: builds and signs a release bundle, or makes a release key pair. */
async function main(argv: string[]) {
  if (argv[0] === 'keygen') {
    const dir = path.resolve(argv[1] ?? '.');
    await fs.mkdir(dir, { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const priv = path.join(dir, 'release-key.pem');
    const pub = path.join(dir, 'release-key.pub.pem');
    await fs.writeFile(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
      flag: 'wx',
    });
    await fs.writeFile(pub, publicKey.export({ type: 'spki', format: 'pem' }), { flag: 'wx' });
    console.log(`key ${keyId(publicKey)}: private ${priv} (keep it off the appliance), public ${pub}`);
    return;
  }
  const { values } = parseArgs({
    args: argv,
    options: {
      key: { type: 'string' },
      version: { type: 'string' },
      out: { type: 'string' },
      from: { type: 'string' },
      'data-plane': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.key) {
    console.log(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const from = path.resolve(values.from ?? path.join(import.meta.dirname, '../..'));
  const pkgVersion = (
    JSON.parse(await fs.readFile(path.join(from, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const version = values.version ?? `v${pkgVersion}`;
  const out = path.resolve(values.out ?? `vtl-${version}.tar.gz`);
  const key = createPrivateKey(await fs.readFile(values.key));
  const manifest = await buildBundle({
    from,
    out,
    key,
    version,
    components: values['data-plane'] ? ['control-plane', 'data-plane'] : ['control-plane'],
  });
  console.log(
    `${out}: release ${manifest.version} (${manifest.components.join(', ')}), payload ${manifest.payload.size} bytes, signed`,
  );
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(`bundle: ${err.message}`);
  process.exit(1);
});
