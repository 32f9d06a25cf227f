import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VtlError, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { putTestRemote, startTestStores, type TestStores } from '@vtl/store/testing';
import { remoteConnection } from './remote-connection.js';

describe('remoteConnection', () => {
  let t: TestStores;
  let store: Store;
  beforeAll(async () => {
    t = await startTestStores();
    store = t.stores[0]!;
  });
  afterAll(() => t?.stop());

  it('joins the remote record and its sealed secret', async () => {
    await putTestRemote(store, { id: 1, endpoint: 'rgw:7480', bucket: 'tapes', prefix: 'site' });
    await store.put(keys.remoteSecrets.one(1), { secret_key: 'wJalrXUtnFEMI' });
    expect(await remoteConnection(store, 1)).toEqual({
      endpoint: 'rgw:7480',
      region: '',
      bucket: 'tapes',
      prefix: 'site',
      access_key: 'a',
      secret_key: 'wJalrXUtnFEMI',
      use_ssl: false,
      path_style: true,
    });
  });

  it('is a 400 saying what to do for a missing remote or secret', async () => {
    const missing = await remoteConnection(store, 9).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(VtlError);
    expect(missing).toMatchObject({
      status: 400,
      message: expect.stringMatching(/no such remote; GET \/api\/remotes/),
    });
    await putTestRemote(store, { id: 2 });
    await expect(remoteConnection(store, 2)).rejects.toThrow(/set one with PUT \/api\/remotes\/2/);
  });
});
