import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserRecord, keys } from '@vtl/api';
import { ensureInitialAdmin, INITIAL_PASSWORD_FILE, login } from './users.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/**
 * The chart's first admin: its password comes from a Secret made once (mounted as a file,
 * VTL_INITIAL_ADMIN_PASSWORD_FILE), so an apiserver pod that dies loses nothing, and every
 * replica and restart logs in with the same password the operator reads from the Secret.
 */
describe('the first admin with a given password file', () => {
  const t = useTestStore(2);
  let dir: string;
  const log = pino({ level: 'silent' });
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-admin-'));
  });
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('refuses a too short password and creates nothing', async () => {
    const file = path.join(dir, 'short');
    await fs.writeFile(file, 'short\n');
    await expect(ensureInitialAdmin(t.store, dir, log, file)).rejects.toThrow(/fewer than 12 characters/);
    expect(await t.store.get(keys.users.one('admin'), UserRecord)).toBeUndefined();
  });

  it('creates admin once with that password, writes no password file, and a second replica keeps it', async () => {
    const file = path.join(dir, 'password');
    await fs.writeFile(file, 'Secret-from-the-chart-123\n');
    const stateA = path.join(dir, 'a');
    const stateB = path.join(dir, 'b');
    await Promise.all([
      ensureInitialAdmin(t.store, stateA, log, file),
      ensureInitialAdmin(t.stores[1]!, stateB, log, file),
    ]);
    for (const state of [stateA, stateB])
      await expect(fs.access(path.join(state, INITIAL_PASSWORD_FILE))).rejects.toThrow();
    const session = await login(t.store, 'admin', 'Secret-from-the-chart-123', 60);
    expect(session).toMatchObject({ username: 'admin', role: 'admin' });

    // A later start with another file content (an upgrade that made a new Secret) changes nothing.
    await fs.writeFile(file, 'Another-password-4567\n');
    await ensureInitialAdmin(t.stores[1]!, stateB, log, file);
    await expect(login(t.stores[1]!, 'admin', 'Another-password-4567', 60)).rejects.toThrow(/wrong password/);
    await expect(login(t.stores[1]!, 'admin', 'Secret-from-the-chart-123', 60)).resolves.toMatchObject({
      username: 'admin',
    });
  });
});
