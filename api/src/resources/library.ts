import { z } from 'zod';
import { LABEL_PREFIX } from '../identifiers.js';
import { ManagedBy } from './managed-by.js';
import { TEXT_LIMITS, displayText } from '../text.js';

export const LibraryState = z.enum(['pending_restart', 'active']);
export type LibraryState = z.infer<typeof LibraryState>;

/** Desired library configuration. Written by the apiserver (declare, delete request). */
export const LibrarySpec = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  vendor: z.string(),
  product: z.string(),
  variant: z.string(),
  serial: z.string(),
  drive_model: z.string(),
  drive_serials: z.array(z.string()),
  num_drives: z.number().int(),
  num_slots: z.number().int(),
  num_ie: z.number().int(),
  label_prefix: z.string(),
  media_dir: z.string(),
  home_pool: z.number().int(),
  created_at: z.string(),
  /** Set when a delete was requested; the controller finishes it (a retry resumes it). */
  deleting: z.boolean().default(false),
  /** The GitOps source that owns the library (docs/gitops.md); absent when made through REST. */
  managed_by: ManagedBy.optional(),
});
export type LibrarySpec = z.infer<typeof LibrarySpec>;

/**
 * Where a library is in its lifecycle (docs/architecture.md): declared (no status yet) ->
 * pending_restart (not in the served set) -> activating (in the data plane's desired set, not
 * yet served) -> active (served); degraded (applied, its node stopped serving it) and failed
 * (the activation did not bring it up) name the trouble. `state` stays the API's two values.
 */
export const LibraryPhase = z.enum([
  'declared',
  'pending_restart',
  'activating',
  'active',
  'degraded',
  'failed',
]);
export type LibraryPhase = z.infer<typeof LibraryPhase>;

export const ConditionType = z.enum(['Ready', 'Serving', 'Degraded']);
export type ConditionType = z.infer<typeof ConditionType>;

/** A Kubernetes-style condition: lastTransitionTime changes only when status does. */
export const Condition = z.object({
  type: ConditionType,
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
});
export type Condition = z.infer<typeof Condition>;

/** Library lifecycle status. Written by the controller's library reconciler only, by CAS. */
export const LibraryStatus = z.object({
  id: z.number().int(),
  state: LibraryState,
  activated_at: z.string().optional(),
  phase: LibraryPhase.optional(),
  /** The library spec's revision (its etcd mod revision) this status was derived from. */
  observedGeneration: z.number().int().optional(),
  /** The data-plane generation this library was last seen served in. */
  served_generation: z.number().int().optional(),
  /** The data-plane generation this status was derived against. */
  dataplane_generation: z.number().int().optional(),
  conditions: z.array(Condition).optional(),
});
export type LibraryStatus = z.infer<typeof LibraryStatus>;

/**
 * GET /api/libraries/{lib}/status (beyond the spec): the library's lifecycle as the controller's
 * library reconciler derives it. `phase` is `declared` and `conditions` empty until it has.
 */
export const LibraryLifecycle = z.object({
  phase: LibraryPhase,
  observedGeneration: z.number().int().nullable(),
  conditions: z.array(Condition),
});
export type LibraryLifecycle = z.infer<typeof LibraryLifecycle>;

/** GET /api/libraries/{lib}/status: the lifecycle with the library's id and API state. */
export const LibraryStatusView = z
  .object({ id: z.number().int(), state: LibraryState })
  .extend(LibraryLifecycle.shape);
export type LibraryStatusView = z.infer<typeof LibraryStatusView>;

/** Row of GET /api/libraries (§2.14). */
export const LibraryRow = z.object({
  id: z.number().int(),
  name: z.string(),
  vendor: z.string(),
  product: z.string(),
  variant: z.string(),
  serial: z.string(),
  drive_model: z.string(),
  num_drives: z.number().int(),
  label_prefix: z.string(),
  media_dir: z.string(),
  home_pool: z.number().int(),
  state: LibraryState,
  created_at: z.string(),
  /** Beyond the spec: the lifecycle of GET /api/libraries/{lib}/status, on each row. */
  ...LibraryLifecycle.shape,
});
export type LibraryRow = z.infer<typeof LibraryRow>;

const int = (what: string) =>
  z.number({ error: `${what} must be an integer` }).int(`${what} must be an integer`);

/** Body of POST /api/libraries (§4.6). Range checks that depend on the model are in the route. */
export const DeclareLibraryRequest = z.strictObject({
  name: displayText('name', TEXT_LIMITS.name)
    .regex(/^[\w .-]*$/, 'name: letters, digits, space, _ . -')
    .default(''),
  product: z.string().min(1, 'product is required (3573-TL or 03584L32)'),
  drive_product: z.string().min(1, 'drive_product is required, e.g. ULT3580-TD8'),
  num_drives: int('num_drives').min(1, 'num_drives must be at least 1'),
  num_slots: int('num_slots').min(0).max(400, 'num_slots must be 1 to 400 (0 = default 100)').default(0),
  num_map: int('num_map').min(0).max(32, 'num_map must be 1 to 32 (0 = default 4)').default(0),
  label_prefix: z.string().regex(LABEL_PREFIX, 'label_prefix must be exactly three characters A-Z or 0-9'),
  pool_id: int('pool_id').positive('pool_id must name a pool'),
});
export type DeclareLibraryRequest = z.infer<typeof DeclareLibraryRequest>;

export const DeclareLibraryResponse = z.object({
  library: z.number().int(),
  serial: z.string(),
  drive_serials: z.array(z.string()),
  state: z.literal('pending_restart'),
  note: z.string(),
});

export const ConfirmRequest = (word: string) =>
  z.strictObject({ confirm: z.literal(word, { error: `confirm must be the word "${word}"` }) });

export const ApplyResponse = z.object({
  steps: z.array(z.string()),
  fc: z.object({ OK: z.boolean(), Detail: z.string() }),
});
export type ApplyResponse = z.infer<typeof ApplyResponse>;

export const DeleteLibraryRequest = z.strictObject({
  confirm: z.string({ error: 'confirm must be the library name or serial' }),
  acknowledge: z.literal('I understand', { error: 'acknowledge must be the literal string "I understand"' }),
});

export const DeleteLibraryResponse = z.object({
  ok: z.boolean(),
  library: z.number().int(),
  name: z.string(),
  cartridges_deleted: z.number().int(),
  skipped: z.array(z.string()),
  rebooting: z.boolean(),
});
export type DeleteLibraryResponse = z.infer<typeof DeleteLibraryResponse>;

export const NextLabelResponse = z.object({ label: z.string(), prefix: z.string(), suffix: z.string() });

export const LoadRequest = z.strictObject({ label: z.string().min(1, 'label is required') });
export const LoadResponse = z.object({ ok: z.boolean(), detail: z.string() });
export const UnloadResponse = z.object({ ok: z.boolean(), detail: z.string(), slot: z.number().int() });
