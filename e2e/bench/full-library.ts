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
