import { z } from 'zod';
import { CONTROL_CHARS, displayText } from '../text.js';

/**
 * Shared system storage of one node (docs/storage.md): a btrfs filesystem over block devices
 * an operator names, on which pools are subvolumes. The apiserver writes the spec; the node's
 * nodeagent makes the filesystem, mounts it, grows it and tears it down.
 */
export const BlockDevicePath = z
  .string()
  .min(6)
  .max(255, 'device: at most 255 characters')
  .refine((p) => !CONTROL_CHARS.test(p), 'device: control characters are not allowed')
  .refine((p) => p.startsWith('/dev/') && !p.includes('/../'), 'device must be a path under /dev/');

/** How often a dedup pass runs, and whether it is paused. */
export const DedupSchedule = z.strictObject({
  /** Minutes between the end of one pass and the start of the next (5 min to 7 days). */
  interval_minutes: z
    .number()
    .int()
    .min(5)
    .max(7 * 24 * 60),
  paused: z.boolean(),
});
export type DedupSchedule = z.infer<typeof DedupSchedule>;

export const DEFAULT_DEDUP_SCHEDULE: DedupSchedule = { interval_minutes: 60, paused: false };

export const StorageSpec = z.object({
  node: z.string(),
  /** Every device the filesystem should span, in the order they were named. */
  devices: z.array(z.string()),
  /** Devices whose existing filesystem the operator chose to overwrite (`force`). */
  force: z.array(z.string()).default([]),
  dedup: DedupSchedule.default(DEFAULT_DEDUP_SCHEDULE),
  created_at: z.string(),
  /** PUT /api/storage/dedup with run_now: a pass starts once the node sees it. */
  dedup_requested_at: z.string().optional(),
  /** Set by DELETE /api/storage: the nodeagent unmounts, wipes and then removes the record. */
  deleting: z.boolean().optional(),
});
export type StorageSpec = z.infer<typeof StorageSpec>;

export const DedupRunState = z.enum(['idle', 'running', 'paused']);

/** The dedup pass as the node last saw it: what runs now and how the last one ended. */
export const DedupStatus = z.object({
  state: DedupRunState,
  /** Files (cartridge image files) of the pass in progress, or of the last one. */
  files_total: z.number().int(),
  files_done: z.number().int(),
  last_started_at: z.string().nullable(),
  last_finished_at: z.string().nullable(),
  last_result: z.enum(['completed', 'interrupted', 'failed']).nullable(),
  last_detail: z.string(),
  next_at: z.string().nullable(),
  /** Seconds the pass in progress (or the last one) spent paused while drives moved host bytes. */
  host_pause_seconds: z.number().int().default(0),
  /**
   * Times the pass in progress (or the last one) had waited its longest (the nodeagent's
   * VTL_DEDUP_MAX_PAUSE_MINUTES) and ran on for a while despite host I/O.
   */
  host_pause_overrides: z.number().int().default(0),
});
export type DedupStatus = z.infer<typeof DedupStatus>;

export const StorageState = z.enum(['pending', 'ready', 'error', 'deleting']);

export const StorageStatus = z.object({
  node: z.string(),
  state: StorageState,
  detail: z.string(),
  mountpoint: z.string(),
  uuid: z.string().nullable(),
  /** Devices the mounted filesystem spans now. */
  devices: z.array(z.string()),
  metadata_profile: z.string().nullable(),
  size_bytes: z.number().int(),
  alloc_bytes: z.number().int(),
  dedup: DedupStatus,
  updated_at: z.string(),
});
export type StorageStatus = z.infer<typeof StorageStatus>;

/** Row of GET /api/storage: the spec and what the node reports of it. */
export const StorageView = z.object({
  node: z.string(),
  devices: z.array(z.string()),
  dedup_schedule: DedupSchedule,
  created_at: z.string(),
  deleting: z.boolean(),
  status: StorageStatus.nullable(),
});
export type StorageView = z.infer<typeof StorageView>;

const uniqueDevices = (list: string[]) => new Set(list).size === list.length;

export const SetupStorageRequest = z.strictObject({
  node: displayText('node', 63).min(1).optional(),
  devices: z
    .array(BlockDevicePath)
    .min(1, 'devices: name at least one block device')
    .max(16, 'devices: at most 16')
    .refine(uniqueDevices, 'devices: each device once'),
  /** Overwrite a filesystem the devices already hold. */
  force: z.boolean().optional(),
  dedup: DedupSchedule.optional(),
});
export type SetupStorageRequest = z.infer<typeof SetupStorageRequest>;

export const AddStorageDeviceRequest = z.strictObject({
  node: displayText('node', 63).min(1).optional(),
  device: BlockDevicePath,
  force: z.boolean().optional(),
});
export type AddStorageDeviceRequest = z.infer<typeof AddStorageDeviceRequest>;

export const DedupScheduleRequest = z.strictObject({
  node: displayText('node', 63).min(1).optional(),
  interval_minutes: DedupSchedule.shape.interval_minutes.optional(),
  paused: z.boolean().optional(),
  /** Start a pass now (unless paused), whatever the interval. */
  run_now: z.boolean().optional(),
});
export type DedupScheduleRequest = z.infer<typeof DedupScheduleRequest>;

/** Per-pool compression on shared storage: `zstd` (level 3), `zstd:1`..`zstd:15`, or `none`. */
export const PoolCompression = z
  .string()
  .regex(/^(none|zstd|zstd:([1-9]|1[0-5]))$/, 'compression: none, zstd or zstd:1 to zstd:15');
export const DEFAULT_POOL_COMPRESSION = 'zstd:3';
