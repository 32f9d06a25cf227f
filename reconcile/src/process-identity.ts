import fs from 'node:fs/promises';

/**
 * Who a pid is, in a form that survives pid reuse: the host boot and the process's start time
 * in clock ticks since that boot (/proc/<pid>/stat field 22). A pid written to a file is only
 * signalled again when both still match.
 */
export interface ProcessIdentity {
  pid: number;
  /** `<boot id>:<start ticks>`. */
  started: string;
}

let bootId: string | undefined;

async function currentBootId(): Promise<string> {
  bootId ??= (await fs.readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  return bootId;
}

/** The identity of a running process, or undefined when no such pid runs. */
export async function identify(pid: number): Promise<ProcessIdentity | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // The command name in parentheses may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); a zombie has exited already.
  if (fields[0] === 'Z') return undefined;
  return { pid, started: `${await currentBootId()}:${fields[19]}` };
}

/** The command line of a running process (empty when it is gone). */
export async function commandLine(pid: number): Promise<string[]> {
  const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return raw.split('\0').filter(Boolean);
}

/** True when `who` still runs: the same pid started at the same moment of the same boot. */
export async function stillRuns(who: ProcessIdentity): Promise<boolean> {
  const now = await identify(who.pid);
  return now !== undefined && now.started === who.started;
}
