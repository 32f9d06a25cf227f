/**
 * The control socket between the emulator and its nodeagent: newline-delimited JSON over a
 * Unix socket. Requests carry an id; each gets one Response with that id. Notifications
 * (no id) are pushed to every connected client. Error codes are @vtl/api ErrorCode values.
 */
import type { ChapCredentials } from '../transport/iscsi/chap.js';

export interface EmulatorLibraryConfig {
  id: number;
  name: string;
  serial: string;
  product: string;
  vendor: string;
  drive_product: string;
  drive_serials: string[];
  num_slots: number;
  num_ie: number;
  media_dir: string;
  generation: number /* LTO generation of the drives */;
}

export interface EmulatorConfig {
  node: string;
  generation: number /* data-plane generation */;
  socket: string;
  iscsi: {
    bind: string;
    port: number;
    open: boolean;
    allowed_initiators: string[];
    /** TCP congestion control of the iSCSI connections (DEFAULT_TCP_CONGESTION when absent); '' keeps the system's. */
    tcp_congestion?: string;
  };
  libraries: EmulatorLibraryConfig[];
}

export interface EmuDrive {
  index: number;
  queue_id: number;
  serial: string;
  product: string;
  /** How hosts address the drive, e.g. `<target iqn>:lun3`. */
  device: string;
  loaded: string;
  source_slot: number;
  activity: 'idle' | 'reading' | 'writing' | 'mounting';
  blocks_written: number;
  blocks_read: number;
  /** Absent from an emulator started by an older release (adopted across an update). */
  iscsi_bytes_written?: number;
  iscsi_bytes_read?: number;
  last_active: string;
}

export interface EmuLibrary {
  id: number;
  serial: string;
  changer: string /* e.g. "iqn...:lun0" device description */;
  drives: EmuDrive[];
  slots: { kind: 'storage' | 'ie'; num: number; label: string }[];
  cartridges: {
    label: string;
    size_bytes: number;
    phys_bytes: number;
    /** Absent from an emulator started by an older release (adopted across an update). */
    capacity_bytes?: number;
    modified: string;
    stub: boolean;
    location: string /* slot:N | ie:N | drive:N */;
  }[];
}

export interface EmuEvent {
  kind: string;
  subject: string;
  detail: string;
  data: Record<string, unknown>;
}

export type Request =
  | { id: number; method: 'hello' } // → { pid, generation, started_at, iscsi_portal }
  | { id: number; method: 'status'; params?: { since?: string } } // → StatusResult; `since`: the tag of a status the caller holds, answered `unchanged` (no libraries) while it still holds
  | { id: number; method: 'set_access'; params: { initiators: InitiatorAccess[] } } // → SetAccessResult; replaces the iSCSI initiator registry live
  | { id: number; method: 'mint'; params: { library: number; label: string; slot: number } } // → { label, slot }; creates the VOL1 image and places it; idempotent if that label already sits in that slot
  | {
      id: number;
      method: 'mint_batch';
      params: { library: number; items: { label: string; slot: number }[] };
    } // → { results: (MintResult | { label, slot, error: { code, message } })[] } in item order; images in parallel, one inventory write
  | { id: number; method: 'remove'; params: { library: number; label: string } } // → {} ; deletes image + inventory entry; refused while loaded
  | { id: number; method: 'load'; params: { library: number; drive: number; label: string } } // → { detail }
  | { id: number; method: 'unload'; params: { library: number; drive: number; force?: boolean } } // → { detail, slot }; force (library delete) skips the busy check and the 15 s quiet window
  | { id: number; method: 'shutdown' } // → {} then the process exits cleanly
  | { id: number; method: 'hold'; params: { library: number; label: string; holder: string } } // → {}; keeps the cartridge out of drives; refused while loaded
  | { id: number; method: 'release'; params: { library: number; label: string } } // → {}
  | { id: number; method: 'evict'; params: { library: number; label: string } } // → {}; image becomes a labelled stub; refused while loaded
  | { id: number; method: 'swap_in'; params: { library: number; label: string; staging: string } } // → {}; replaces the image with the unpacked one in `staging` (same pool); refused while loaded
  | {
      id: number;
      method: 'place_in_ie';
      params: { library: number; label: string; staging: string; slot?: number };
    } // → { location }; a new cartridge from `staging` into storage slot `slot` when given and empty (recovery), else the first empty I/E slot
  | { id: number; method: 'return_to_slot'; params: { library: number; label: string; slot: number } }; // → { slot }; from an I/E slot back to storage slot `slot` (or the first empty one)

export type Response =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { code: string; message: string } };

export type Notification = { event: EmuEvent }; // pushed to every connected client

/** Result shapes of the methods above, for the typed client and the server handlers. */
export interface HelloResult {
  pid: number;
  generation: number;
  started_at: string;
  iscsi_portal: string;
}
export interface StatusResult {
  /** Empty when `unchanged`. */
  libraries: EmuLibrary[];
  /**
   * Changes whenever `libraries` does (and differs between two emulator processes): a caller
   * that passes it back as `since` gets `unchanged` instead of the same libraries again.
   * Absent from emulators older than it.
   */
  tag?: string;
  /** The libraries are those of the status tagged `since` (and so not sent again). */
  unchanged?: boolean;
  /** Logged-in iSCSI sessions (normal sessions, every initiator). */
  iscsi_sessions: number;
  /** Initiator names with a normal iSCSI session now. */
  iscsi_logins?: string[];
}
export interface MintResult {
  label: string;
  slot: number;
}
export interface MintBatchResult {
  results: (MintResult | { label: string; slot: number; error: { code: string; message: string } })[];
}
export interface LoadResult {
  detail: string;
}
export interface UnloadResult {
  detail: string;
  slot: number;
}

/** One registered iSCSI initiator and the libraries it may see (empty: none). */
export interface InitiatorAccess {
  name: string;
  libraries: number[];
  /** CHAP credentials: with them the initiator must log in with CHAP (mutual when both mutual_* are set). */
  chap?: ChapCredentials;
}
export interface SetAccessResult {
  /** Sessions dropped because their initiator left the registry. */
  dropped: number;
}

export type Method = Request['method'];
type RequestOf<M extends Method> = Extract<Request, { method: M }>;
export type ParamsOf<M extends Method> = 'params' extends keyof RequestOf<M>
  ? RequestOf<M>['params']
  : undefined;
