import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureSealingKeyFile, isEnvelope, parseKeyFile } from '@vtl/sealing';
import { Store } from './store.js';
import { startTestEtcd, type TestEtcd } from './test-etcd.js';
import type { WatchEvent } from './watch.js';

const Secret = z.object({ secret_key: z.string() });
const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';

let etcd: TestEtcd;
let store: Store;
/** Reads what etcd really holds, past the Store's sealing. */
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

const stored = async (key: string) => JSON.parse((await raw.get(key).string()) ?? 'null') as unknown;

describe('secrets sealed at rest', () => {
  it('creates the key file 0600 once, and keeps it', async () => {
    expect((await stat(etcd.sealingKeyFile)).mode & 0o777).toBe(0o600);
    const before = await readFile(etcd.sealingKeyFile, 'utf8');
    expect(ensureSealingKeyFile(etcd.sealingKeyFile)).toBe(false);
    expect(await readFile(etcd.sealingKeyFile, 'utf8')).toBe(before);
  });

  it('stores an AES-GCM envelope with the key id and a fresh nonce per write; reads give the plaintext', async () => {
    const key = '/vtl/secrets/remotes/000000000001';
    await store.put(key, { secret_key: SECRET });
    const first = await stored(key);
    expect(isEnvelope(first)).toBe(true);
    expect(JSON.stringify(first)).not.toContain(SECRET);
    const kid = parseKeyFile(await readFile(etcd.sealingKeyFile, 'utf8'), 'f')[0]!.kid;
    expect(first).toMatchObject({ sealed: 'v1', kid });
    await store.put(key, { secret_key: SECRET });
    expect(((await stored(key)) as { nonce: string }).nonce).not.toBe((first as { nonce: string }).nonce);
    expect((await store.get(key, Secret))?.value.secret_key).toBe(SECRET);
    expect((await store.list('/vtl/secrets/', Secret)).items.map((i) => i.value.secret_key)).toEqual([
      SECRET,
    ]);
    // Records elsewhere stay plain JSON.
    await store.put('/vtl/spec/remotes/000000000001', { name: 'r' });
    expect(await stored('/vtl/spec/remotes/000000000001')).toEqual({ name: 'r' });
  });

  it('seals through every write path (create, update, transactions) and opens watch events', async () => {
    const events: WatchEvent[] = [];
    const watch = await store.watch('/vtl/secrets/initiators/', {}, (e) => events.push(e));
    try {
      await store.create('/vtl/secrets/initiators/a', { secret_key: 'created-secret-1234' });
      await store.update('/vtl/secrets/initiators/a', Secret, (c) => ({
        secret_key: `${c!.secret_key}-updated`,
      }));
      await store.transaction().put('/vtl/secrets/initiators/b', { secret_key: 'txn-secret-5678' }).commit();
      for (const k of ['a', 'b']) expect(isEnvelope(await stored(`/vtl/secrets/initiators/${k}`))).toBe(true);
      expect((await store.get('/vtl/secrets/initiators/a', Secret))?.value.secret_key).toBe(
        'created-secret-1234-updated',
      );
      await expect.poll(() => events.length).toBe(3);
      expect(events.map((e) => (e.type === 'put' ? e.value : undefined))).toEqual([
        { secret_key: 'created-secret-1234' },
        { secret_key: 'created-secret-1234-updated' },
        { secret_key: 'txn-secret-5678' },
      ]);
    } finally {
      await watch.close();
    }
  });

  it('will not open an envelope moved under another key', async () => {
    await raw
      .put('/vtl/secrets/remotes/000000000099')
      .value(JSON.stringify(await stored('/vtl/secrets/remotes/000000000001')));
    await expect(store.get('/vtl/secrets/remotes/000000000099', Secret)).rejects.toThrow(/does not open/);
    await raw.delete().key('/vtl/secrets/remotes/000000000099');
  });

  it('refuses secrets with a clear error when the key file is missing or lacks the key id', async () => {
    const missing = await Store.connect({
      endpoints: [etcd.endpoint],
      sealingKeyFile: join(etcd.dir, 'nope.key'),
    });
    const other = join(etcd.dir, 'other.key');
    ensureSealingKeyFile(other);
    const wrong = await Store.connect({ endpoints: [etcd.endpoint], sealingKeyFile: other });
    const none = await Store.connect({ endpoints: [etcd.endpoint] });
    try {
      const key = '/vtl/secrets/remotes/000000000001';
      await expect(missing.get(key, Secret)).rejects.toThrow(
        /nope.key cannot be read \(ENOENT\).*back from your backup/,
      );
      await expect(missing.put(key, { secret_key: 'x' })).rejects.toThrow(/nope.key cannot be read/);
      await expect(wrong.get(key, Secret)).rejects.toThrow(
        /sealed with key "k[0-9a-f]{8}", which the sealing key file .*other.key does not hold/,
      );
      await expect(none.put(key, { secret_key: 'x' })).rejects.toThrow(/set VTL_SEALING_KEY_FILE/);
      // A listing skips what it cannot open (logged), as it skips records failing their schema.
      expect((await missing.list('/vtl/secrets/', Secret)).items).toEqual([]);
      // Nothing was written in clear by the refused puts.
      expect(isEnvelope(await stored(key))).toBe(true);
    } finally {
      await Promise.all([missing.close(), wrong.close(), none.close()]);
    }
  });

  it('refuses a malformed key file, saying what to do', async () => {
    const bad = join(etcd.dir, 'bad.key');
    await writeFile(bad, 'k1 c2hvcnQ=\n', { mode: 0o600 });
    const s = await Store.connect({ endpoints: [etcd.endpoint], sealingKeyFile: bad });
    try {
      await expect(s.get('/vtl/secrets/remotes/000000000001', Secret)).rejects.toThrow(
        /line 1: expected .* Restore/,
      );
    } finally {
      await s.close();
      await rm(bad);
    }
  });
});
