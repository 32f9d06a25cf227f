import { z } from 'zod';
import { TEXT_LIMITS, displayText } from '../text.js';

/** §5.3: endpoint roles, lowest first. A principal holds `read-only` or `admin`. */
export const Role = z.enum(['public', 'read-only', 'admin']);
export type Role = z.infer<typeof Role>;
export const PrincipalRole = z.enum(['read-only', 'admin']);
export type PrincipalRole = z.infer<typeof PrincipalRole>;

/** Whether a principal of role `held` may call an endpoint labelled `needed`. */
export const roleAllows = (held: PrincipalRole, needed: Role) =>
  Role.options.indexOf(held) >= Role.options.indexOf(needed);

export const USERNAME = /^[a-z0-9][a-z0-9._-]{0,31}$/;
export const Username = z
  .string()
  .regex(USERNAME, 'username must be 1 to 32 of a-z 0-9 . _ -, starting with a letter or digit');
/** Long enough to resist guessing, short enough that hashing it is cheap. */
export const Password = z
  .string()
  .min(12, 'password must be at least 12 characters')
  .max(256, 'password must be at most 256 characters');

/** A user record; `password_hash` never leaves the apiserver. */
export const UserRecord = z.object({
  username: z.string(),
  role: PrincipalRole,
  password_hash: z.string(),
  created_at: z.string(),
  password_changed_at: z.string(),
  /**
   * Set on the first admin, whose password came from a file (docs/api.md "Authentication"):
   * cleared by the first password change. Clients ask for a new password while it is set.
   */
  must_change_password: z.boolean().optional(),
});
export type UserRecord = z.infer<typeof UserRecord>;
export const UserRow = UserRecord.omit({ password_hash: true });
export type UserRow = z.infer<typeof UserRow>;

/** A session, stored under the hash of its token: the token itself is never stored. */
export const SessionRecord = z.object({
  username: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

/** An API key, stored as the SHA-256 of the key; the key is shown once on create. */
export const ApiKeyRecord = z.object({
  id: z.number().int(),
  name: z.string(),
  role: PrincipalRole,
  key_hash: z.string(),
  created_at: z.string(),
  created_by: z.string(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;
export const ApiKeyRow = ApiKeyRecord.omit({ key_hash: true });
export type ApiKeyRow = z.infer<typeof ApiKeyRow>;

export const LoginRequest = z.strictObject({ username: z.string().trim().min(1), password: z.string() });
export const LoginResponse = z.object({
  token: z.string(),
  username: z.string(),
  role: PrincipalRole,
  expires_at: z.string(),
  /** The user still has the initial password: the console asks for a new one before anything else. */
  must_change_password: z.boolean(),
});
export const WhoAmI = z.object({
  kind: z.enum(['user', 'apikey']),
  name: z.string(),
  role: PrincipalRole,
  apikeys_enabled: z.boolean(),
  /** As in the login answer; always false for an API key. */
  must_change_password: z.boolean(),
});

export const CreateUserRequest = z.strictObject({
  username: Username,
  password: Password,
  role: PrincipalRole.default('read-only'),
});
export const ChangePasswordRequest = z.strictObject({
  password: Password,
  /** Required when users change their own password; an admin resetting another user omits it. */
  current_password: z.string().optional(),
});

export const CreateApiKeyRequest = z.strictObject({
  name: displayText('name', TEXT_LIMITS.name).min(1, 'name is required'),
  role: PrincipalRole.default('read-only'),
});
/** The only response that ever carries the key. */
export const CreatedApiKey = ApiKeyRow.extend({ key: z.string() });
export const OkResponse = z.object({ ok: z.literal(true) });
