import type { DriveActivity } from '@vtl/api';
import { isoNow } from '@vtl/api/base';

/** What a drive is doing; not persisted: counters are "since process start" by definition. */
export interface DriveRuntime {
  activity: DriveActivity;
  blocksWritten: number;
  blocksRead: number;
  /** Data-Out and Data-In bytes of the drive's iSCSI commands. */
  iscsiBytesWritten: number;
  iscsiBytesRead: number;
  /** Epoch ms of the last activity or move; 0 = never since start. */
  lastActive: number;
}

export const DEFAULT_UNLOAD_GUARD_MS = 15_000;

export function newDriveRuntime(): DriveRuntime {
  return {
    activity: 'idle',
    blocksWritten: 0,
    blocksRead: 0,
    iscsiBytesWritten: 0,
    iscsiBytesRead: 0,
    lastActive: 0,
  };
}

export function lastActiveIso(d: DriveRuntime): string {
  return d.lastActive > 0 ? isoNow(new Date(d.lastActive)) : '';
}

/**
 * Why media may not be pulled from this drive now, or undefined when it may. An operator
 * unload also honours the quiet window (`guardMs` after the last activity); a host's own
 * MOVE MEDIUM only the busy check, since hosts unload right after their last command.
 */
export function removalRefusal(
  index: number,
  d: DriveRuntime,
  opts: { now: number; guardMs: number; quietWindow: boolean },
): string | undefined {
  if (d.activity !== 'idle')
    return `drive ${index} is ${d.activity}; unload it once the host has finished with it`;
  if (!opts.quietWindow || d.lastActive === 0) return undefined;
  const quietFor = opts.now - d.lastActive;
  if (quietFor >= opts.guardMs) return undefined;
  const wait = Math.ceil((opts.guardMs - quietFor) / 1000);
  return `drive ${index} was active ${Math.floor(quietFor / 1000)} s ago; media is not pulled from a drive active in the last ${opts.guardMs / 1000} s, retry in ${wait} s`;
}
