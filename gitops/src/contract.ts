import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Condition, KIND_NAMES } from './model/index.js';

/**
 * The REST contract of /api/gitops (docs/gitops.md), shared by the apiserver routes and the `vtl`
 * CLI. Field names are the API's (snake_case where the rest of the API is), except the
 * declared objects themselves, which are Kubernetes-style.
 */
export const SOURCE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const SourceName = z
  .string()
  .regex(SOURCE_NAME, 'source: lowercase letters, digits and -, at most 63');

/**
 * The Kubernetes source of a namespace is named `kubernetes-<namespace>` (audited as
 * `gitops:kubernetes-<namespace>`): a source name is a DNS label like every name of the model, so
 * the issue's `kubernetes:<ns>` is spelled with a dash. A namespace too long for the 63
 * characters keeps its first 42 and gets a hash of the whole, so two never share a source.
 * Git sources may not take the prefix (CreateSourceRequest), so neither can pose as the other.
 */
export const KUBERNETES_SOURCE_PREFIX = 'kubernetes-';
export function kubernetesSourceName(namespace: string): string {
  const plain = `${KUBERNETES_SOURCE_PREFIX}${namespace}`;
  if (plain.length <= 63) return plain;
  const hash = createHash('sha256').update(namespace).digest('hex').slice(0, 8);
  return `${KUBERNETES_SOURCE_PREFIX}${namespace.slice(0, 42).replace(/-+$/, '')}-${hash}`;
}

/** A manifest file: its name (for error messages) and its YAML text (several documents allowed). */
export const ManifestFile = z.strictObject({
  file: z.string().min(1).max(1024),
  content: z.string().max(1_000_000, 'content: at most 1 MB per file'),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

export const PlanRequest = z.strictObject({
  source: SourceName.default('cli').describe('Which source owns what this set creates (default cli)'),
  documents: z.array(ManifestFile).max(1000, 'documents: at most 1000 files'),
  prune: z.boolean().default(false).describe('Delete what this source created and no longer declares'),
});
export type PlanRequest = z.infer<typeof PlanRequest>;

/** One problem with the desired set: the file, the document's index in it (from 0), the field. */
export const PlanError = z.object({
  file: z.string(),
  document: z.number().int(),
  /** Line in the file (from 1) of the field, or of the nearest enclosing one that is there. */
  line: z.number().int().optional(),
  kind: z.string(),
  name: z.string(),
  field: z.string(),
  message: z.string(),
});
export type PlanError = z.infer<typeof PlanError>;

export const ActionKind = z.enum(['create', 'update', 'unchanged', 'prune', 'refused']);
export type ActionKind = z.infer<typeof ActionKind>;

export const PlanAction = z.object({
  kind: z.enum(KIND_NAMES),
  name: z.string(),
  action: ActionKind,
  /** Spec fields (camelCase) that differ; for refused, the immutable ones that changed. */
  fields: z.array(z.string()),
  reason: z.string().optional(),
  /** Where it is declared (absent for prune). */
  file: z.string().optional(),
  /** The library is activated by this sync (activation: auto, not yet active). */
  activate: z.boolean().optional(),
  /** A library that stays declared but not served after this sync (activation: manual). */
  pendingActivation: z.boolean().optional(),
  /** The object was made outside this source (through REST) and this sync takes it over. */
  adopt: z.boolean().optional(),
  /** A refused change re-created under the recreate annotation. */
  recreate: z.boolean().optional(),
  /** The record was edited outside this source (REST) and this sync puts the declared values back. */
  drift: z.boolean().optional(),
});
export type PlanAction = z.infer<typeof PlanAction>;

export const PlanResponse = z.object({
  source: z.string(),
  valid: z.boolean(),
  errors: z.array(PlanError),
  actions: z.array(PlanAction),
});
export type PlanResponse = z.infer<typeof PlanResponse>;

/** What one applied action did: ok, or the refusal the appliance gave. */
export const AppliedAction = z.object({
  kind: z.string(),
  name: z.string(),
  action: ActionKind,
  ok: z.boolean(),
  detail: z.string(),
});
export type AppliedAction = z.infer<typeof AppliedAction>;

export const ApplyResponse = PlanResponse.extend({
  /** The revision recorded as applied (a commit for Git sources; a content hash otherwise). */
  revision: z.string(),
  applied: z.array(AppliedAction),
  /** True when every action succeeded. */
  ok: z.boolean(),
});
export type ApplyResponse = z.infer<typeof ApplyResponse>;

/** Secrets referenced by `secretRef`: write-only key/value pairs, sealed at rest. */
export const SecretName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'secret name: lowercase letters, digits and -, at most 63');
export const PutSecretRequest = z.strictObject({
  data: z
    .record(
      z.string().regex(/^[A-Za-z0-9_.-]{1,63}$/, 'secret keys: letters, digits, _ . -'),
      z.string().min(1).max(4096),
    )
    .refine((d) => Object.keys(d).length > 0 && Object.keys(d).length <= 16, 'data: 1 to 16 keys'),
});
export const SecretView = z.object({ name: z.string(), keys: z.array(z.string()), updated_at: z.string() });
export type SecretView = z.infer<typeof SecretView>;

/**
 * A Git source's credential (like Flux's GitRepository secretRef), write-only. `secret_ref` names
 * a secret registered with PUT /api/gitops/secrets/{name} (docs/gitops.md "Authenticated
 * sources"): keys `token` (with `username`, default x-access-token) for HTTPS, or `identity`
 * (an SSH private key) with `known_hosts` for SSH. The inline forms are kept sealed with the source.
 */
export const KNOWN_HOSTS_MAX = 65_536;
export const GitCredential = z.union([
  z.strictObject({ https_token: z.string().min(1).max(4096) }),
  z.strictObject({
    ssh_key: z.string().min(1).max(16384),
    known_hosts: z.string().min(1).max(KNOWN_HOSTS_MAX).optional(),
  }),
  z.strictObject({ secret_ref: SecretName }),
]);
export const SourceSpecFields = {
  url: z
    .string()
    .min(1)
    .max(2048)
    .regex(
      /^(https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/,
      'url: an http(s)://, ssh://, git://, file:// or user@host: URL',
    )
    // A password in the URL would show wherever the URL does (the source's view, git's errors).
    .refine(
      (u) => !/^[a-z+]+:\/\/[^/@]*:[^/@]*@/i.test(u),
      'url: no user:password@ in the URL; register the token as a secret and name it in credential.secret_ref',
    ),
  branch: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\w./-]+$/, 'branch: a branch name')
    .default('main'),
  path: z
    .string()
    .max(1024)
    .regex(/^[^\0]*$/)
    .default('.')
    .describe('Directory in the repository holding the manifests'),
  interval_sec: z.number().int().min(10).max(86_400).default(300),
  prune: z.boolean().default(true),
  suspended: z.boolean().default(false),
  ca_cert: z
    .string()
    .max(65_536)
    .regex(/-----BEGIN CERTIFICATE-----/, 'ca_cert: PEM certificates (-----BEGIN CERTIFICATE-----)')
    .optional()
    .describe(
      "CA certificates (PEM) an https:// server's certificate must chain to, instead of the system's",
    ),
};
export const CreateSourceRequest = z.strictObject({
  name: SourceName.refine(
    (n) => !n.startsWith(KUBERNETES_SOURCE_PREFIX),
    `name: "${KUBERNETES_SOURCE_PREFIX}…" is reserved for the Kubernetes sources (one per namespace)`,
  ),
  ...SourceSpecFields,
  credential: GitCredential.optional(),
});
export type CreateSourceRequest = z.infer<typeof CreateSourceRequest>;
export const UpdateSourceRequest = z.strictObject({
  url: SourceSpecFields.url.optional(),
  branch: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\w./-]+$/)
    .optional(),
  path: z.string().max(1024).optional(),
  interval_sec: z.number().int().min(10).max(86_400).optional(),
  prune: z.boolean().optional(),
  suspended: z.boolean().optional(),
  ca_cert: SourceSpecFields.ca_cert.unwrap().or(z.null()).optional().describe('null removes it'),
  credential: GitCredential.or(z.null()).optional().describe('null removes the stored credential'),
});
export type UpdateSourceRequest = z.infer<typeof UpdateSourceRequest>;

export const SourceOutcome = z.enum(['never', 'applied', 'invalid', 'failed', 'fetch_failed']);

/** One declared object after the last sync of a source: its action and Kubernetes-style conditions. */
export const ObjectStatus = z.object({
  kind: z.string(),
  name: z.string(),
  action: ActionKind,
  conditions: z.array(Condition),
});
export type ObjectStatus = z.infer<typeof ObjectStatus>;
export const SourceStatus = z.object({
  /** The commit last applied with every action ok. */
  applied_revision: z.string(),
  /** The commit last fetched (what the last attempt looked at). */
  last_revision: z.string(),
  outcome: SourceOutcome,
  message: z.string(),
  errors: z.array(PlanError),
  last_poll_at: z.string(),
  last_applied_at: z.string(),
  /** Per declared object of the last revision looked at: Synced and Ready, with reason and message. */
  objects: z.array(ObjectStatus).default([]),
});
export type SourceStatus = z.infer<typeof SourceStatus>;
/** A Git source's settings as stored (records.ts) and shown; the credential only by its kind. */
export const SourceSettings = z.object({
  name: z.string(),
  url: z.string(),
  branch: z.string(),
  path: z.string(),
  interval_sec: z.number().int(),
  prune: z.boolean(),
  suspended: z.boolean(),
  /** CA certificates (PEM, public) for an https:// server; absent = the system's. */
  ca_cert: z.string().optional(),
  credential: z.enum(['none', 'https_token', 'ssh_key', 'secret_ref']),
  /** With credential secret_ref: the secret (PUT /api/gitops/secrets/{name}) holding it. */
  secret_ref: z.string().optional(),
  created_at: z.string(),
});
export const SourceView = SourceSettings.extend({ status: SourceStatus });
export type SourceView = z.infer<typeof SourceView>;
/** The webhook secret, shown once when a source is created (or rotated). */
export const CreateSourceResponse = SourceView.extend({ webhook_secret: z.string() });
