import { z } from 'zod';
import { ErrorBody } from '../error-schema.js';

/**
 * A maintenance operation or an imperative request (apply, data-plane restart, library delete,
 * load, unload), or a node-local step the controller asks of a node (erase_library, reboot). The apiserver writes it; its executor (the controller, or the nodeagent named
 * in `executor`) runs it and records the outcome, so the request survives a client disconnect.
 */
export const OpKind = z.enum([
  'apply',
  'dataplane_restart',
  'delete_library',
  'load',
  'unload',
  'reboot',
  /** A library delete's node-local part (emulator and disk), asked of the node by the controller. */
  'erase_library',
  // Remote work the controller runs (the apiserver never talks to S3): docs/architecture.md.
  'recover',
  'catalog_rebuild',
  'remote_test',
  'remote_objects_list',
  'remote_objects_delete',
  // Node-side checks of a pool path (symlinks resolve on the node's own disk).
  'pool_path_check',
  // Node-side checks of the block devices named for shared storage (docs/storage.md).
  'storage_device_check',
]);
export type OpKind = z.infer<typeof OpKind>;

export const OpState = z.enum(['pending', 'running', 'succeeded', 'failed']);
export type OpState = z.infer<typeof OpState>;

export const Op = z.object({
  id: z.number().int(),
  kind: OpKind,
  /** `controller`, `controller:remote` (S3 work), or `node:<name>` for work on one node's data plane. */
  executor: z.string(),
  params: z.record(z.string(), z.unknown()),
  state: OpState,
  steps: z.array(z.string()).default([]),
  result: z.unknown().optional(),
  /**
   * Where a resumable operation has got to (e.g. a recovery's declared library and its apply
   * op), written in the same transaction as the step it records, so a restarted executor
   * resumes instead of repeating it.
   */
  progress: z.record(z.string(), z.unknown()).optional(),
  error: ErrorBody.shape.error.optional(),
  requested_by: z.string().default(''),
  created_at: z.string(),
  finished_at: z.string().optional(),
});
export type Op = z.infer<typeof Op>;

export const isOpFinished = (op: Op) => op.state === 'succeeded' || op.state === 'failed';

/** Params of an erase_library op: what the node erases from its emulator and its disk. */
export const EraseLibraryParams = z.object({
  library: z.number().int(),
  labels: z.array(z.string()),
  media_dir: z.string(),
  /** The library's pool directory: only a media directory inside it is ever removed. */
  pool_path: z.string(),
});
export type EraseLibraryParams = z.infer<typeof EraseLibraryParams>;
