import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { GitSourceSecret, StoredSecret, conflict, isoNow, keys } from '@vtl/api';
import type { Store, Txn } from '@vtl/store';
import { resealUnder, type Resealed } from './reseal.js';

/**
 * The sealed GitOps secrets: those declared objects name by `secretRef` (keys.gitopsSecrets)
 * and each Git source's webhook secret and inline credential (keys.gitopsSourceSecrets). The
 * only module that writes them (the apiserver's GitOps routes; re-sealed by a seal rotation).
 * A source's secret record is written in the transaction of its source record, which the
 * source's owner builds: these functions give that transaction its secret part.
 */

/** What this module reads of a Git source record: which secret it fetches with. */
const SourceRef = z.object({ name: z.string(), secret_ref: z.string().optional() });

/** A source's credential values, as kept in its secret record beside the webhook secret. */
export type SourceCredentialSecret = Omit<GitSourceSecret, 'webhook_secret'>;

/** Registers or replaces a `secretRef` secret; returns what was stored. */
export async function putGitopsSecret(
  store: Store,
  name: string,
  data: Record<string, string>,
): Promise<StoredSecret> {
  const record: StoredSecret = { data, updated_at: isoNow() };
  await store.put(keys.gitopsSecrets.one(name), record);
  return record;
}

/**
 * Deletes a `secretRef` secret unless a Git source fetches with it (a 409 naming them: that
 * source would fail at its next poll); compared with the sources as listed, so a source made to
 * use it meanwhile is seen. false when there is no such secret.
 */
export async function deleteGitopsSecret(store: Store, name: string): Promise<boolean> {
  const key = keys.gitopsSecrets.one(name);
  for (let attempt = 0; attempt < 20; attempt++) {
    const secret = await store.get(key, z.unknown());
    if (!secret) return false;
    const sources = await store.list(keys.gitopsSources.prefix, SourceRef);
    const users = sources.items.filter((i) => i.value.secret_ref === name).map((i) => i.value.name);
    if (users.length > 0)
      throw conflict(
        `Secret "${name}" is the credential of Git source(s) ${users.join(', ')}; give them another credential (PUT /api/gitops/sources/{name}) first.`,
      );
    const ok = await store
      .transaction()
      .ifModRevision(key, secret.modRevision)
      .ifUnchangedSince(keys.gitopsSources.prefix, sources.revision)
      .delete(key)
      .commit();
    if (ok) return true;
  }
  throw conflict(`Secret "${name}" or the Git sources kept changing while deleting it; retry.`);
}

/**
 * The secret part of a source's create: a new webhook secret (shown once, in the create's
 * answer) and the credential's values, put by `write` in the source's transaction.
 */
export function newSourceSecret(
  name: string,
  credential: SourceCredentialSecret,
): { webhook_secret: string; write: (txn: Txn) => void } {
  const webhook_secret = randomBytes(24).toString('base64url');
  return {
    webhook_secret,
    write: (txn) =>
      void txn.put(keys.gitopsSourceSecrets.one(name), {
        webhook_secret,
        ...credential,
      } satisfies GitSourceSecret),
  };
}

/**
 * The secret part of a source's credential change: the new credential's values with the
 * source's webhook secret kept (a new one if it had none), for the source's transaction.
 */
export async function replaceSourceCredential(
  store: Store,
  name: string,
  credential: SourceCredentialSecret,
): Promise<(txn: Txn) => void> {
  const key = keys.gitopsSourceSecrets.one(name);
  const current = await store.get(key, GitSourceSecret);
  const webhook_secret = current?.value.webhook_secret ?? randomBytes(24).toString('base64url');
  return (txn) => void txn.put(key, { webhook_secret, ...credential } satisfies GitSourceSecret);
}

/** The secret part of a source's delete: its secret record goes with it. */
export function removeSourceSecret(name: string): (txn: Txn) => void {
  return (txn) => void txn.delete(keys.gitopsSourceSecrets.one(name));
}

/**
 * Seals the `secretRef` secrets again under the sealing key kid (appliance/src/seal-rotation.ts),
 * each by compare-and-swap at the revision read: one changed meanwhile keeps its new value
 * and is counted as changed (records/reseal.ts).
 */
export function resealGitopsSecrets(store: Store, kid: string): Promise<Resealed> {
  return resealUnder(store, keys.gitopsSecrets.prefix, kid, (key, value, modRevision) =>
    // writes keys.gitopsSecrets
    store.casPut(key, value, modRevision),
  );
}

/**
 * Seals the Git sources' secrets again under the sealing key kid (appliance/src/seal-rotation.ts),
 * each by compare-and-swap at the revision read: one changed meanwhile keeps its new value
 * and is counted as changed (records/reseal.ts).
 */
export function resealGitopsSourceSecrets(store: Store, kid: string): Promise<Resealed> {
  return resealUnder(store, keys.gitopsSourceSecrets.prefix, kid, (key, value, modRevision) =>
    // writes keys.gitopsSourceSecrets
    store.casPut(key, value, modRevision),
  );
}
