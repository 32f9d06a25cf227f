import fs from 'node:fs/promises';
import path from 'node:path';
import { commandLine, identify, stillRuns, type ProcessIdentity } from '@vtl/reconcile/process-identity';

/** One process the appliance started, as recorded in `<run dir>/<name>.pid`. */
export interface PidRecord extends ProcessIdentity {
  name: string;
  /** A word of its command line (its entry file or binary) that must still be there to signal it. */
  marker: string;
}

/**
 * Pid files of the processes one appliance started, in its state directory's run dir: the next
 * start reads them to find what a killed appliance left behind. A record counts only while the
 * same process (pid and start time) runs the same command, so a recycled pid is never signalled.
 */
export class PidFiles {
  constructor(readonly dir: string) {}

  private file(name: string) {
    return path.join(this.dir, `${name}.pid`);
  }

  /** Records a process just started; false when it is already gone. */
  async write(name: string, pid: number, marker: string): Promise<boolean> {
    const who = await identify(pid);
    if (!who) return false;
    const record: PidRecord = { name, marker, ...who };
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file(name)}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(record) + '\n', { mode: 0o600 });
    await fs.rename(tmp, this.file(name));
    return true;
  }

  async remove(name: string): Promise<void> {
    await fs.rm(this.file(name), { force: true });
  }

  /** Every record whose process still runs the recorded command; stale files are removed. */
  async running(): Promise<PidRecord[]> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const live: PidRecord[] = [];
    for (const entry of names.filter((n) => n.endsWith('.pid'))) {
      const file = path.join(this.dir, entry);
      const record = await readRecord(file);
      if (record && (await isRunning(record))) live.push(record);
      else await fs.rm(file, { force: true });
    }
    return live;
  }
}

async function isRunning(record: PidRecord): Promise<boolean> {
  if (!(await stillRuns(record))) return false;
  return (await commandLine(record.pid)).some((arg) => arg.includes(record.marker));
}

async function readRecord(file: string): Promise<PidRecord | undefined> {
  try {
    const r = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<PidRecord>;
    if (typeof r.pid !== 'number' || typeof r.started !== 'string' || typeof r.marker !== 'string')
      return undefined;
    return {
      name: String(r.name ?? path.basename(file, '.pid')),
      pid: r.pid,
      started: r.started,
      marker: r.marker,
    };
  } catch {
    return undefined;
  }
}
