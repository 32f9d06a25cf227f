import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * What an integrator's program does with the SDK generated from the served document: a typed
 * client (openapi-fetch) that lists pools, declares a library and lists jobs with a filter.
 * Compiled with strict tsc, so a wrong path, body field or query name fails here.
 */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Library = components['schemas']['Library'];
type Pool = components['schemas']['Pool'];
type Job = components['schemas']['Job'];

const client = createClient<paths>({
  baseUrl: process.env.VTL_URL!,
  headers: { authorization: \`Bearer \${process.env.VTL_TOKEN}\` },
});

const pools = await client.GET('/api/pools');
const pool: Pool | undefined = pools.data?.[0];
const declared = await client.POST('/api/libraries', {
  body: { name: 'sdk', product: '3573-TL', drive_product: 'ULT3580-TD8', num_drives: 1, label_prefix: 'SDK', pool_id: pool!.id },
});
const libraries = await client.GET('/api/libraries');
const mine: Library | undefined = libraries.data?.find((l) => l.name === 'sdk');
const jobs = await client.GET('/api/jobs', { params: { query: { state: 'failed' } } });
const failed: Job[] = jobs.data ?? [];
console.log(
  JSON.stringify({
    pools: pools.response.status,
    pool: pool?.name,
    declared: declared.response.status,
    serial: declared.data?.serial,
    library: mine?.serial,
    jobs: jobs.response.status,
    failed: failed.length,
  }),
);
`;

describe('an SDK generated from the served OpenAPI document', () => {
  let app: Appliance;
  let dir: string;
  beforeAll(async () => {
    app = await Appliance.start();
    fs.mkdirSync(path.join(root, 'e2e/.vtl-test'), { recursive: true });
    // Inside the repository, so that the program resolves openapi-fetch as an installed package.
    dir = fs.mkdtempSync(path.join(root, 'e2e/.vtl-test/sdk-'));
  });
  afterAll(async () => {
    await app?.destroy();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('compiles under strict tsc and calls the appliance', async () => {
    const served = await app.anonymous.get('/api/openapi.json');
    expect(served.status).toBe(200);
    fs.writeFileSync(path.join(dir, 'schema.ts'), astToString(await openapiTS(served.body)));
    fs.writeFileSync(path.join(dir, 'main.ts'), PROGRAM);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          outDir: 'out',
        },
        files: ['main.ts', 'schema.ts'],
      }),
    );
    const tsc = spawnSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', dir], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const run = spawnSync(process.execPath, [path.join(dir, 'out/main.js')], {
      encoding: 'utf8',
      env: {
        ...process.env,
        VTL_URL: `https://127.0.0.1:${app.ports.https}`,
        VTL_TOKEN: app.api.token,
        // The appliance's certificate is its own self-signed one.
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
      },
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    expect(result).toMatchObject({ pools: 200, declared: 201, jobs: 200, failed: 0 });
    expect(result.library).toBe(result.serial);
    expect((await app.api.get('/api/libraries')).body.map((l: { name: string }) => l.name)).toContain('sdk');
  }, 180_000);
});
