import { waitFor } from '@vtl/reconcile';
import type { Appliance } from '../src/harness/appliance.js';

/**
 * Declares the benchmarks' full library (issue 13): a 03584L32 with 12 LTO-8 drives, 400 slots
 * and 4 I/E slots in the given pool, named `<prefix>-<n>`, with a label prefix unique per `n`.
 * Returns its id.
 */
export async function declareFullLibrary(
  app: Appliance,
  poolId: number,
  n: number,
  prefix = 'bench',
): Promise<number> {
  const letters = `${String.fromCharCode(65 + Math.floor(n / 26))}${String.fromCharCode(65 + (n % 26))}`;
  const res = await app.api.post('/api/libraries', {
    name: `${prefix}-${n}`,
    product: '03584L32',
    drive_product: 'ULT3580-TD8',
    num_drives: 12,
    num_slots: 400,
    num_map: 4,
    label_prefix: `${prefix[0]!.toUpperCase()}${letters}`,
    pool_id: poolId,
  });
  if (res.status !== 201) throw new Error(`declare answered ${res.status}: ${res.text}`);
  return res.body.library;
}

/**
 * `count` full libraries, each in a pool of its own (the appliance's first pool for the first),
 * applied and minted full (400 cartridges each); waits until the cartridge list shows them all.
 */
export async function loadFullLibraries(app: Appliance, count: number, prefix: string): Promise<void> {
  for (let n = 0; n < count; n++) {
    const pool =
      n === 0
        ? (await app.api.get('/api/pools')).body[0]
        : (
            await app.api.post('/api/pools', {
              name: `${prefix}-${n}`,
              path: `${app.stateDir}/pools/${prefix}-${n}`,
            })
          ).body;
    await waitFor(
      async () =>
        (await app.api.get('/api/pools')).body.find((p: { id: number }) => p.id === pool.id)?.state ===
        'active',
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const library = await declareFullLibrary(app, pool.id, n, prefix);
    const applied = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
    if (applied.status !== 200) throw new Error(`apply answered ${applied.status}: ${applied.text}`);
    const minted = await app.api.post('/api/cartridges', { library, count: 400 });
    if (minted.status !== 200) throw new Error(`mint answered ${minted.status}: ${minted.text}`);
  }
  await waitFor(async () => (await app.api.get('/api/cartridges')).body.length === 400 * count, {
    timeoutMs: 120_000,
  });
}
