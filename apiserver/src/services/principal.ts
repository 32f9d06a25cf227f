import {
  ApiKeyRecord,
  SessionRecord,
  Settings,
  UserRecord,
  VtlError,
  keys,
  type PrincipalRole,
} from '@vtl/api';
import type { Store } from '@vtl/store';
import { classifyToken, sameHash } from './secrets.js';
import { dropExpiredSession } from './users.js';
import { internalPrincipal, servicePrincipal } from './service-principals.js';
import type { ViewCache } from './view-cache.js';

/** Who is asking: a logged-in user, an API key, or a service (the GitOps applier, docs/gitops.md). */
export interface Principal {
  kind: 'user' | 'apikey' | 'service';
  /** User name, or `<id>:<name>` of the key. */
  name: string;
  role: PrincipalRole;
  /** The session key of a user's request (logout revokes it). */
  sessionKey?: string;
}

const LOGIN_HINT = 'log in with POST /api/auth/login and send Authorization: Bearer <token>';

const unauthorized = (why: string) => new VtlError('unauthorized', `${why}; ${LOGIN_HINT}.`);

/** The bearer token of an Authorization header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <token>"');
  return m[1];
}

/**
 * Resolves a bearer token to its principal, or throws 401. An API key counts only while the
 * setting apikeys.enabled is 1 (§5.2); otherwise it is treated as no credential.
 */
/** Where credentials are looked up: the store, or the apiserver's watch cache of the same records. */
export type RecordReader = Pick<Store, 'get'>;

export async function resolvePrincipal(
  store: Store,
  token: string | undefined,
  reader: RecordReader = store,
): Promise<Principal> {
  if (!token) throw unauthorized('No credentials');
  const internal = internalPrincipal(token);
  if (internal) return internal;
  const service = await servicePrincipal(reader, token);
  if (service) return service;
  const claim = classifyToken(token);
  if (!claim) throw unauthorized('The bearer token is not a session token or an API key');
  if (claim.kind === 'session') {
    const key = keys.sessions.one(claim.hash);
    const session = await reader.get(key, SessionRecord);
    if (!session) throw unauthorized('The session is unknown or was logged out');
    if (Date.parse(session.value.expires_at) <= Date.now()) {
      await dropExpiredSession(store, session);
      throw unauthorized('The session expired');
    }
    const user = await reader.get(keys.users.one(session.value.username), UserRecord);
    if (!user) throw unauthorized('The user of this session was deleted');
    return { kind: 'user', name: user.value.username, role: user.value.role, sessionKey: key };
  }
  const settings = (await reader.get(keys.settings, Settings))?.value ?? {};
  if (settings['apikeys.enabled'] !== '1')
    throw unauthorized(
      'API keys are ignored while the setting apikeys.enabled is not 1 (an admin can set it)',
    );
  const apiKey = await reader.get(keys.apiKeys.one(claim.id), ApiKeyRecord);
  if (!apiKey || !sameHash(apiKey.value.key_hash, claim.hash))
    throw unauthorized('The API key is unknown or was revoked');
  return { kind: 'apikey', name: `${apiKey.value.id}:${apiKey.value.name}`, role: apiKey.value.role };
}

/** A principal the fast path resolved, and until when its session lasts. */
interface Remembered {
  principal: Principal;
  expiresAt: number;
}

/** Distinct tokens remembered per cache version; past it the memory starts over. */
const MAX_REMEMBERED = 1_000;

/**
 * resolvePrincipal() without waiting, from the view cache's records alone, for the fast path of
 * the cached views: the principal when the token is a session or API key the cache holds and
 * accepts, else undefined. Undefined is "ask resolvePrincipal()", never a refusal: every 401
 * (and its message, and an expired session's deletion) stays with the one full path.
 *
 * A token's principal is remembered until the cache's records change (a logout, a revoked key,
 * a role or setting changed) or its session expires: a polling console or monitor sends the same
 * token thousands of times a second, and hashing it each time cost more than the rest of the check.
 */
export function cachedPrincipal(
  token: string,
  views: Pick<ViewCache, 'cached' | 'memo'>,
): Principal | undefined {
  const remembered = views.memo('principals-by-token', () => new Map<string, Remembered>());
  const hit = remembered.get(token);
  if (hit && hit.expiresAt > Date.now()) return hit.principal;
  const resolved = resolveCached(token, views);
  if (!resolved) return undefined;
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(token, resolved);
  return resolved.principal;
}

function resolveCached(token: string, views: Pick<ViewCache, 'cached'>): Remembered | undefined {
  const internal = internalPrincipal(token);
  if (internal) return { principal: internal, expiresAt: Infinity };
  const claim = classifyToken(token);
  if (!claim) return undefined;
  if (claim.kind === 'session') {
    const key = keys.sessions.one(claim.hash);
    const session = views.cached(key, SessionRecord);
    const expiresAt = session ? Date.parse(session.value.expires_at) : 0;
    if (!session || expiresAt <= Date.now()) return undefined;
    const user = views.cached(keys.users.one(session.value.username), UserRecord);
    if (!user) return undefined;
    return {
      principal: { kind: 'user', name: user.value.username, role: user.value.role, sessionKey: key },
      expiresAt,
    };
  }
  if (views.cached(keys.settings, Settings)?.value['apikeys.enabled'] !== '1') return undefined;
  const apiKey = views.cached(keys.apiKeys.one(claim.id), ApiKeyRecord);
  if (!apiKey || !sameHash(apiKey.value.key_hash, claim.hash)) return undefined;
  return {
    principal: { kind: 'apikey', name: `${apiKey.value.id}:${apiKey.value.name}`, role: apiKey.value.role },
    expiresAt: Infinity,
  };
}
