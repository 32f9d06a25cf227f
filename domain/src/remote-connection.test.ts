import { describe, expect, it } from 'vitest';
import { VtlError, keys } from '@vtl/api';
import { putTestRemote } from '@vtl/store/testing';
import { remoteConnection } from './remote-connection.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

describe('remoteConnection', () => {
  const t = useTestStore();

  it('joins the remote record and its sealed secret', async () => {
    await putTestRemote(t.store, { id: 1, endpoint: 'rgw:7480', bucket: 'tapes', prefix: 'site' });
    await t.store.put(keys.remoteSecrets.one(1), { secret_key: 'wJalrXUtnFEMI' });
    expect(await remoteConnection(t.store, 1)).toEqual({
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
    const missing = await remoteConnection(t.store, 9).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(VtlError);
    expect(missing).toMatchObject({
      status: 400,
      message: expect.stringMatching(/no such remote; GET \/api\/remotes/),
    });
    await putTestRemote(t.store, { id: 2 });
    await expect(remoteConnection(t.store, 2)).rejects.toThrow(/set one with PUT \/api\/remotes\/2/);
  });
});
