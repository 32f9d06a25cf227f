import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  SessionRecord,
  UserRecord,
  VtlError,
  badRequest,
  conflict,
  isoNow,
  keys,
  notFound,
  type PrincipalRole,
} from '@vtl/api';
import type { Store } from '@vtl/store';
import { hashPassword, newSessionToken, randomPassword, sha256, verifyPassword } from './secrets.js';

export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/**
 * Secure by default: the first start creates user `admin` with a random password, written to
 * `$VTL_STATE_DIR/initial-admin-password` (0600). The file is written before the record and
 * renamed into place after it, so a crash never leaves an admin whose password nobody knows.
 */
export async function ensureInitialAdmin(
  store: Store,
  stateDir: string,
  log: Logger,
  /**
   * VTL_INITIAL_ADMIN_PASSWORD_FILE: the password is given (charts/vtl mounts it from a Secret
   * made once), so nothing is written to a state directory that an emptyDir would lose.
   */
  givenPasswordFile?: string,
): Promise<void> {
  const file = path.join(stateDir, INITIAL_PASSWORD_FILE);
  if (await store.get(keys.authBootstrap, UserRecord.pick({ username: true }))) {
    if (!givenPasswordFile && (await exists(file)))
      log.warn({ file }, 'the initial admin password file still exists; change the password and delete it');
    return;
  }
  if (givenPasswordFile) return createGivenAdmin(store, givenPasswordFile, log);
  const password = randomPassword();
  const now = isoNow();
  const admin: UserRecord = {
    username: 'admin',
    role: 'admin',
    password_hash: await hashPassword(password),
    created_at: now,
    password_changed_at: now,
    must_change_password: true,
  };
  await fs.mkdir(stateDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, password + '\n', { mode: 0o600 });
  const created = await store
    .transaction()
    .ifAbsent(keys.authBootstrap)
    .ifAbsent(keys.users.one('admin'))
    .put(keys.authBootstrap, { username: 'admin', created_at: now })
    .put(keys.users.one('admin'), admin)
    .commit();
  if (!created) {
    await fs.rm(tmp, { force: true });
    return;
  }
  await fs.rename(tmp, file);
  log.warn({ file, username: 'admin' }, 'created user admin; its initial password is in this file');
}

/** The first admin, with the password of a file someone else made (and keeps). */
async function createGivenAdmin(store: Store, passwordFile: string, log: Logger): Promise<void> {
  const password = (await fs.readFile(passwordFile, 'utf8')).replace(/\r?\n$/, '');
  if (password.length < 12)
    throw new Error(
      `VTL_INITIAL_ADMIN_PASSWORD_FILE ${passwordFile} holds fewer than 12 characters; put a longer password in it`,
    );
  const now = isoNow();
  const admin: UserRecord = {
    username: 'admin',
    role: 'admin',
    password_hash: await hashPassword(password),
    created_at: now,
    password_changed_at: now,
    must_change_password: true,
  };
  const created = await store
    .transaction()
    .ifAbsent(keys.authBootstrap)
    .ifAbsent(keys.users.one('admin'))
    .put(keys.authBootstrap, { username: 'admin', created_at: now })
    .put(keys.users.one('admin'), admin)
    .commit();
  if (created)
    log.warn(
      { file: passwordFile, username: 'admin' },
      'created user admin with the initial password of this file',
    );
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** Checks a login and opens a session; the one message does not tell which part was wrong. */
export async function login(store: Store, username: string, password: string, ttlSec: number) {
  const user = await store.get(keys.users.one(username), UserRecord);
  // Hash anyway for an unknown user, so timing does not reveal which names exist.
  const ok = user
    ? await verifyPassword(password, user.value.password_hash)
    : (await hashPassword(password), false);
  if (!user || !ok)
    throw new VtlError('unauthorized', 'Unknown user or wrong password; check both and log in again.');
  await sweepSessions(store, () => false);
  const token = newSessionToken();
  const expires = new Date(Date.now() + ttlSec * 1000);
  const session: SessionRecord = { username, created_at: isoNow(), expires_at: isoNow(expires) };
  await store.put(keys.sessions.one(sha256(token)), session);
  return {
    token,
    username,
    role: user.value.role,
    expires_at: session.expires_at,
    must_change_password: user.value.must_change_password === true,
  };
}

/** Logout: ends the session under `sessionKey` (a principal's). */
export async function endSession(store: Store, sessionKey: string): Promise<void> {
  // writes keys.sessions: the key is the principal's, made by resolvePrincipal from keys.sessions.one.
  await store.delete(sessionKey);
}

/**
 * Removes a session found expired when its token came back, only as it was read: a session
 * written since (another login cannot reuse the hash, but a sweep may have removed it) is left.
 */
export async function dropExpiredSession(store: Store, session: { key: string; modRevision: string }) {
  // writes keys.sessions: the key is one read by resolvePrincipal under keys.sessions.one.
  await store.delete(session.key, { modRevision: session.modRevision });
}

/** Deletes expired sessions and those `drop` selects (a deleted user's). */
export async function sweepSessions(
  store: Store,
  drop: (s: SessionRecord, key: string) => boolean,
): Promise<void> {
  const { items } = await store.list(keys.sessions.prefix, SessionRecord);
  const now = Date.now();
  for (const { key, value, modRevision } of items)
    if (Date.parse(value.expires_at) <= now || drop(value, key)) await store.delete(key, { modRevision });
}

export async function createUser(
  store: Store,
  body: { username: string; password: string; role: PrincipalRole },
) {
  const now = isoNow();
  const user: UserRecord = {
    username: body.username,
    role: body.role,
    password_hash: await hashPassword(body.password),
    created_at: now,
    password_changed_at: now,
  };
  if (!(await store.create(keys.users.one(body.username), user)))
    throw conflict(`User "${body.username}" exists already; pick another name or change its password.`);
  return user;
}

/** Sets a new password; every other session of the user ends (whoever knew the old one is out). */
export async function changePassword(store: Store, username: string, password: string, keepSession?: string) {
  const hash = await hashPassword(password);
  const updated = await store.update(keys.users.one(username), UserRecord, (u) =>
    u ? { ...withoutFlag(u), password_hash: hash, password_changed_at: isoNow() } : undefined,
  );
  if (!updated) throw notFound(`No user "${username}"; GET /api/users lists them.`);
  await sweepSessions(store, (s, key) => s.username === username && key !== keepSession);
  return updated.value;
}

/** The record without `must_change_password`: any password change ends the initial password. */
function withoutFlag(u: UserRecord): UserRecord {
  const { must_change_password: _, ...rest } = u;
  return rest;
}

/** Deletes a user and its sessions; the last admin stays (an appliance nobody can govern is lost). */
export async function deleteUser(store: Store, username: string): Promise<void> {
  const { items } = await store.list(keys.users.prefix, UserRecord);
  const target = items.find((u) => u.value.username === username);
  if (!target) throw notFound(`No user "${username}"; GET /api/users lists them.`);
  const otherAdmins = items.filter((u) => u.value.role === 'admin' && u.value.username !== username);
  if (target.value.role === 'admin' && otherAdmins.length === 0)
    throw badRequest(`"${username}" is the last admin and cannot be deleted; create another admin first.`);
  // Every other admin must still be there as read: two racing deletes cannot remove both.
  const txn = store.transaction().ifModRevision(target.key, target.modRevision);
  for (const a of otherAdmins) txn.ifModRevision(a.key, a.modRevision);
  if (!(await txn.delete(target.key).commit())) throw conflict('The users changed while deleting; retry.');
  await sweepSessions(store, (s) => s.username === username);
}
