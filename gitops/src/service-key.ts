import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * A service principal's key (docs/gitops.md): `vtlsvc_<name>_<43 base64url>`, stored only as its
 * SHA-256 under keys.serviceKeys, as API keys are. The leader controller mints one for its GitOps
 * poller each time it starts leading; a new key replaces the last.
 */
export const ServiceKeyRecord = z.object({
  name: z.string(),
  key_hash: z.string(),
  role: z.enum(['read-only', 'admin']),
  created_at: z.string(),
});
export type ServiceKeyRecord = z.infer<typeof ServiceKeyRecord>;

export const SERVICE_KEY = /^vtlsvc_([a-z0-9-]{1,63})_[A-Za-z0-9_-]{43}$/;

/** The name the controller's GitOps poller authenticates as. */
export const GITOPS_SERVICE = 'gitops-controller';

export const keyHash = (token: string) => createHash('sha256').update(token).digest('hex');

export function mintServiceKey(
  name: string,
  role: 'read-only' | 'admin',
): { token: string; record: ServiceKeyRecord } {
  const token = `vtlsvc_${name}_${randomBytes(32).toString('base64url')}`;
  return { token, record: { name, key_hash: keyHash(token), role, created_at: new Date().toISOString() } };
}
