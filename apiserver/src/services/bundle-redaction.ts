import fs from 'node:fs/promises';
import path from 'node:path';
import { ROOT, keys, nameFromKey } from '@vtl/api';
import type { Store } from '@vtl/store';
import { z } from 'zod';
import { INITIAL_PASSWORD_FILE } from './users.js';

/** Shorter strings (names, roles, timestamps' parts) are not secrets and would redact too much. */
const MIN_SECRET_LENGTH = 12;
/** Bearer tokens as secrets.ts mints them, wherever they might have been printed. */
const TOKEN = /\bvtl[sk]_[A-Za-z0-9_-]+/;
const SECRET_FIELD = /secret|password|passphrase|token|hash|key/i;
const REDACTED = '[line redacted: it contained a secret]';

/** Every string in a record, and the parts of `$`-joined hashes (salt and digest alone). */
function strings(value: unknown, out: Set<string>, onlySecretFields = false, field = ''): void {
  if (typeof value === 'string') {
    if (onlySecretFields && !SECRET_FIELD.test(field)) return;
    // Lines too: the redactor works line by line, and an SSH private key spans many.
    for (const s of [value, ...value.split('$'), ...value.split('\n').map((l) => l.trim())])
      if (s.length >= MIN_SECRET_LENGTH) out.add(s);
  } else if (Array.isArray(value)) value.forEach((v) => strings(v, out, onlySecretFields, field));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) strings(v, out, onlySecretFields, k);
}

/**
 * The support bundle must never carry a credential (§4.2 rule 5, §5.5). Rather than trusting
 * every log line, it learns the secret values (auth records and their keys, remote credentials,
 * iSCSI CHAP secrets, GitOps secrets and Git credentials, the initial admin password) and drops any line holding one of them or a bearer token.
 */
export async function secretRedactor(store: Store, stateDir: string): Promise<(text: string) => string> {
  const secrets = new Set<string>();
  // Secret-named fields only: usernames and timestamps in the same records are not secrets.
  for (const prefix of [
    `${ROOT}auth/`,
    keys.remotes.prefix,
    keys.remoteSecrets.prefix,
    keys.initiatorSecrets.prefix,
    keys.gitopsSourceSecrets.prefix,
  ])
    for (const item of (await store.list(prefix, z.unknown())).items) strings(item.value, secrets, true);
  // A gitops secret's values are all secret, whatever their keys are named (token, identity, …).
  for (const item of (await store.list(keys.gitopsSecrets.prefix, z.object({ data: z.unknown() }))).items)
    strings(item.value.data, secrets);
  // Sessions are keyed by their token's hash.
  for (const key of await store.listKeys(keys.sessions.prefix)) strings(nameFromKey(key), secrets);
  const initial = await fs.readFile(path.join(stateDir, INITIAL_PASSWORD_FILE), 'utf8').catch(() => '');
  if (initial.trim()) secrets.add(initial.trim());
  const list = [...secrets];
  return (text) =>
    text
      .split('\n')
      .map((line) => (TOKEN.test(line) || list.some((s) => line.includes(s)) ? REDACTED : line))
      .join('\n');
}
