import { pino } from 'pino';
import { Store } from '@vtl/store';
import { loadConfig } from './config.js';
import { adminStoreSettings, rotateSealingKey } from './seal-rotation.js';

/**
 * `npm run seal:rotate [-- --reseal-only]`: rotates the sealing key of the secrets in the store
 * (see docs/security.md). Run on the appliance with the same VTL_* settings as `npm start`; the
 * appliance may keep running. With its own etcd it connects as the admin certificate of
 * $VTL_STATE_DIR/pki; with VTL_ETCD_ENDPOINTS it uses VTL_ETCD_CA_FILE / _CERT_FILE / _KEY_FILE.
 */
async function main(argv: string[]) {
  const unknown = argv.filter((a) => a !== '--reseal-only');
  if (unknown.length > 0) {
    throw new Error(`unknown argument ${unknown[0]}; usage: seal-rotate [--reseal-only]`);
  }
  const config = loadConfig();
  const logger = pino({ name: 'seal-rotate' });
  const settings = adminStoreSettings(config);
  const store = await Store.connect({ ...settings, logger });
  try {
    const report = await rotateSealingKey(store, settings.sealingKeyFile, {
      resealOnly: argv.includes('--reseal-only'),
      logger,
    });
    console.log(
      `Secrets are sealed with key ${report.kid}: ${report.resealed} re-sealed (${report.migrated} of them were in clear)` +
        (report.retired.length ? `; retired ${report.retired.join(', ')}.` : '.') +
        ` Back up ${settings.sealingKeyFile} now.`,
    );
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`seal-rotate failed: ${(err as Error).message}`);
  process.exit(1);
});
