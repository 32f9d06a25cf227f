import { readFile } from 'node:fs/promises';
import type { UpdaterIdentity, UpdateRecord } from '@vtl/api';

/** An updater that has not written its identity this long after staging never started. */
export const START_GRACE_MS = 30_000;
/** How often the updater says it is alive. */
export const HEARTBEAT_MS = 5_000;
/**
 * A live pid whose heartbeat is this old is hung (stopped, or its store connection is gone):
 * its record is settled as if it had died; its later writes are refused (they compare the record).
 */
export const HEARTBEAT_STALE_MS = 120_000;

/** The kernel's id of this boot; changes exactly when the host reboots. */
export async function bootId(): Promise<string> {
  return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim();
}

/**
 * Field 22 of /proc/<pid>/stat (start time in clock ticks since boot) and whether the process is
 * a zombie; undefined when there is no such process. Together with the boot id it names one
 * process for good: a pid reused later has another start time.
 */
async function procStart(pid: number): Promise<{ ticks: string; zombie: boolean } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ticks: fields[19] ?? '', zombie: fields[0] === 'Z' || fields[0] === 'X' };
}

/** This process's identity, to write into the pending record. */
export async function selfIdentity(): Promise<UpdaterIdentity> {
  return {
    pid: process.pid,
    boot_id: await bootId(),
    start_ticks: (await procStart(process.pid))?.ticks ?? '',
    heartbeat_at: new Date().toISOString(),
  };
}

/**
 * Why the updater owning `record` is gone, or undefined while it lives. Checked on the host the
 * updater runs on (the single-node appliance: updates are refused elsewhere), so a dead updater
 * is seen at once rather than after a timeout: a different boot, or no process with its pid and
 * start time. A record with no updater yet is given START_GRACE_MS to get one.
 */
export async function updaterGone(record: UpdateRecord, now = Date.now()): Promise<string | undefined> {
  const who = record.updater;
  if (!who) {
    const since = now - Date.parse(record.staged_at);
    return since > START_GRACE_MS
      ? `no updater took the ${record.action} over within ${START_GRACE_MS / 1000} s of ${record.staged_at}`
      : undefined;
  }
  if (who.boot_id !== (await bootId())) return `the host restarted while updater pid ${who.pid} ran`;
  const proc = await procStart(who.pid);
  if (!proc || proc.zombie || proc.ticks !== who.start_ticks)
    return `updater pid ${who.pid} is no longer running (killed or crashed)`;
  const silent = now - Date.parse(who.heartbeat_at);
  if (silent > HEARTBEAT_STALE_MS)
    return `updater pid ${who.pid} has not reported for ${Math.round(silent / 1000)} s (hung)`;
  return undefined;
}
