import { z } from 'zod';
import { InitiatorView } from './initiator.js';

/** §2.1 FC host port. */
export const FcPort = z.object({
  host: z.string(),
  wwpn: z.string(),
  state: z.string(),
  speed: z.string(),
  serving: z.boolean(),
  built: z.boolean(),
});
export type FcPort = z.infer<typeof FcPort>;

/** §2.2 one LUN of the table every port presents. */
export const TargetLun = z.object({
  lun: z.number().int(),
  backstore: z.string(),
  device: z.string(),
  library: z.number().int(),
});
export type TargetLun = z.infer<typeof TargetLun>;

/** A node ACL found in the kernel on one port (what the nodeagent reads back from configfs). */
export const ObservedAcl = z.object({
  /** Target port, `naa.` form. */
  port: z.string(),
  /** Initiator, `naa.` form. */
  wwpn: z.string(),
  mapped_luns: z.array(z.number().int()),
  logged_in: z.boolean(),
  /** Kernel session id while logged in, '' otherwise. */
  session: z.string(),
});
export type ObservedAcl = z.infer<typeof ObservedAcl>;

/** Element of `unmanaged` (docs/api.md): a kernel ACL the registry does not know; never deleted. */
export const UnmanagedAcl = ObservedAcl.pick({ port: true, wwpn: true, mapped_luns: true, logged_in: true });
export type UnmanagedAcl = z.infer<typeof UnmanagedAcl>;

/** §2.3a GET /api/targets, also the body of every targets write. */
export const TargetsView = z.object({
  fc: z.object({ ports: z.array(FcPort), no_hba: z.boolean() }),
  luns: z.array(TargetLun),
  libraries: z.array(z.number().int()),
  initiators: z.array(InitiatorView),
  unmanaged: z.array(UnmanagedAcl).optional(),
  /** Why the LUN table or the last live apply could not be computed; the registry change stands. */
  error: z.string().optional(),
});
export type TargetsView = z.infer<typeof TargetsView>;

/** Body of PUT /api/targets/ports. */
export const PortServingRequest = z.strictObject({
  wwn: z.string().regex(/^naa\.[0-9a-f]{16}$/, 'wwn must be in naa. form: naa.<16 lower-case hex digits>'),
  serving: z.boolean({ error: 'serving must be true or false' }),
});

/** Query of DELETE /api/targets/acls/{wwpn}. */
export const DeleteInitiatorQuery = z.object({
  force: z.enum(['0', '1'], { error: 'force takes 1 (or 0)' }).optional(),
});

/** What the FC target of one node looks like now (nodeagent-owned, inside its node status). */
export const NodeFcStatus = z.object({
  no_hba: z.boolean(),
  /** Built for the current data-plane generation and every check passed. */
  verified: z.boolean(),
  detail: z.string(),
  verified_at: z.string(),
  /** Data-plane generation the target was last rebuilt for (-1: never). */
  generation: z.number().int(),
  ports: z.array(FcPort),
  luns: z.array(TargetLun),
  acls: z.array(ObservedAcl),
});
export type NodeFcStatus = z.infer<typeof NodeFcStatus>;

/** The fabric part of a node status: FC target, iSCSI access, and how far the registry is applied. */
export const NodeFabricStatus = z.object({
  fc: NodeFcStatus,
  /** iSCSI initiator names with a normal session now. */
  iscsi_logins: z.array(z.string()),
  /** What the emulator's iSCSI target was last told: initiator → library ids. */
  iscsi_access: z.array(z.object({ name: z.string(), libraries: z.array(z.number().int()) })),
  /** etcd revision of the registry and settings the last apply pass read ('' before the first). */
  registry_revision: z.string(),
  /** Why the last live apply failed; '' when it succeeded. */
  error: z.string(),
});
export type NodeFabricStatus = z.infer<typeof NodeFabricStatus>;
