import { randomBytes } from 'node:crypto';
import { VtlError, keys } from '@vtl/api';
import { SERVICE_KEY, ServiceKeyRecord } from '@vtl/gitops';
import { sameHash, sha256 } from './secrets.js';
import type { Principal, RecordReader } from './principal.js';

/**
 * Service principals (docs/gitops.md), neither a person:
 * - a service key (`vtlsvc_<name>_<secret>`, gitops/src/service-key.ts): the leader controller
 *   registers its hash when it starts the GitOps poller; it authenticates POST /api/gitops/apply.
 * - an internal token (`vtlint_<secret>`): minted for the length of one GitOps apply and held in
 *   this process's memory only, so the REST routes the apply calls see the principal
 *   `gitops:<source>` (audited as such) and enforce their own rules unchanged.
 */
const INTERNAL = /^vtlint_[A-Za-z0-9_-]{43}$/;

const internal = new Map<string, Principal>();

export function internalPrincipal(token: string): Principal | undefined {
  return INTERNAL.test(token) ? internal.get(token) : undefined;
}

/** Runs `fn` with a token that authenticates as `name` (admin) within this process only. */
export async function asInternal<T>(name: string, fn: (token: string) => Promise<T>): Promise<T> {
  const token = `vtlint_${randomBytes(32).toString('base64url')}`;
  internal.set(token, { kind: 'service', name, role: 'admin' });
  try {
    return await fn(token);
  } finally {
    internal.delete(token);
  }
}

export async function servicePrincipal(reader: RecordReader, token: string): Promise<Principal | undefined> {
  const m = SERVICE_KEY.exec(token);
  if (!m) return undefined;
  const name = m[1] as string;
  const record = await reader.get(keys.serviceKeys.one(name), ServiceKeyRecord);
  if (!record || !sameHash(record.value.key_hash, sha256(token)))
    throw new VtlError(
      'unauthorized',
      `The service key of "${name}" is unknown or was replaced; the service mints a new one when it starts leading.`,
    );
  return { kind: 'service', name: record.value.name, role: record.value.role };
}
