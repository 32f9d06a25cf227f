import { readFile, stat } from 'node:fs/promises';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { keys } from '@vtl/api';
import { parseKeyFile } from '@vtl/sealing';
import { Store } from '@vtl/store';
import { startTestEtcd, type TestEtcd } from '@vtl/store/testing';
import { rotateSealingKey } from './seal-rotation.js';

const Secret = z.object({ secret_key: z.string() });

let etcd: TestEtcd;
let store: Store;
/** Writes and reads what etcd really holds, past the Store's sealing. */
let raw: Etcd3;
beforeAll(async () => {
  etcd = await startTestEtcd();
  store = await Store.connect({ endpoints: [etcd.endpoint], sealingKeyFile: etcd.sealingKeyFile });
  raw = new Etcd3({ hosts: [etcd.endpoint] });
});
afterAll(async () => {
  raw?.close();
  await store?.close();
  await etcd?.stop();
});

const kids = async () => parseKeyFile(await readFile(etcd.sealingKeyFile, 'utf8'), 'f').map((k) => k.kid);

describe('rotateSealingKey', () => {
  it('puts a new key first, re-seals every secret by CAS (plaintext ones migrated), retires the old key', async () => {
    await store.put('/vtl/secrets/remotes/000000000001', { secret_key: 'sealed-secret-1' });
    await store.put('/vtl/secrets/initiators/a', { secret_key: 'sealed-secret-2' });
    // A record from before sealing existed.
    await raw.put('/vtl/secrets/remotes/000000000002').value(JSON.stringify({ secret_key: 'legacy-plain' }));
    const [oldKid] = await kids();

    const report = await rotateSealingKey(store, etcd.sealingKeyFile);

    expect(report).toMatchObject({ retired: [oldKid], resealed: 3, migrated: 1 });
    expect(await kids()).toEqual([report.kid]);
    expect((await stat(etcd.sealingKeyFile)).mode & 0o777).toBe(0o600);
    for (const s of await store.secretSeals()) expect(s.kid).toBe(report.kid);
    expect(await raw.get('/vtl/secrets/remotes/000000000002').string()).not.toContain('legacy-plain');
    // The same running store reads everything with the new key (it re-read the file).
    const read = async (key: string) => (await store.get(key, Secret))?.value.secret_key;
    expect(await read('/vtl/secrets/remotes/000000000001')).toBe('sealed-secret-1');
    expect(await read('/vtl/secrets/initiators/a')).toBe('sealed-secret-2');
    expect(await read('/vtl/secrets/remotes/000000000002')).toBe('legacy-plain');
  });

  it('with resealOnly keeps the key file as it is and re-seals under its first key', async () => {
    const before = await readFile(etcd.sealingKeyFile, 'utf8');
    await raw.put('/vtl/secrets/remotes/000000000003').value(JSON.stringify({ secret_key: 'plain-again' }));

    const report = await rotateSealingKey(store, etcd.sealingKeyFile, { resealOnly: true });

    expect(report).toMatchObject({ retired: [], resealed: 1, migrated: 1 });
    expect(await readFile(etcd.sealingKeyFile, 'utf8')).toBe(before);
    expect(await raw.get('/vtl/secrets/remotes/000000000003').string()).not.toContain('plain-again');
  });

  /**
   * The store as the rotation sees it, but the first time the rotation reads `key` (after
   * listing it as stale, before writing it back), `update` writes that secret anew: the
   * apiserver changing it at the worst moment.
   */
  function racing(key: string, update: () => Promise<unknown>): Store {
    let raced = false;
    return new Proxy(store, {
      get(target, prop) {
        if (prop === 'get')
          return async (k: string, schema: z.ZodType) => {
            const read = await target.get(k, schema);
            if (k === key && !raced) {
              raced = true;
              await update();
            }
            return read;
          };
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  it('a secret updated while it is re-sealed keeps the update (under the new key: nothing to redo)', async () => {
    const key = keys.remoteSecrets.one(10);
    await store.put(key, { secret_key: 'before' });
    // The owner's write through a running store, which seals under the key file's first key.
    const report = await rotateSealingKey(
      racing(key, () => store.put(key, { secret_key: 'updated' })),
      etcd.sealingKeyFile,
    );

    expect((await store.get(key, Secret))?.value.secret_key).toBe('updated');
    for (const s of await store.secretSeals()) expect(s.kid).toBe(report.kid);
    // The re-seal of the value it read lost its compare-and-swap and was not counted.
    expect(report.resealed).toBe((await store.secretSeals()).length - 1);
  });

  it('a secret updated under an old seal while it is re-sealed is re-sealed again in the next pass', async () => {
    const key = keys.remoteSecrets.one(11);
    await store.put(key, { secret_key: 'before' });
    // A writer that has not yet re-read the key file: here in clear, as from before sealing.
    const report = await rotateSealingKey(
      racing(key, async () => {
        await raw.put(key).value(JSON.stringify({ secret_key: 'updated-in-clear' }));
      }),
      etcd.sealingKeyFile,
    );

    expect((await store.get(key, Secret))?.value.secret_key).toBe('updated-in-clear');
    expect(await raw.get(key).string()).not.toContain('updated-in-clear');
    for (const s of await store.secretSeals()) expect(s.kid).toBe(report.kid);
    expect(report.migrated).toBe(1);
  });
});
