import { readFile, stat } from 'node:fs/promises';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
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
});
