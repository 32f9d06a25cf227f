/**
 * Idle memory of an appliance's process group (issue 13's idle-memory target): every process
 * under the launcher (itself included) but etcd. Used by control-plane.ts and memory-16.ts.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Appliance } from '../src/harness/appliance.js';

/** Resident pages of a process, by physical frame (needs root: pagemap hides frames otherwise). */
async function residentFrames(pid: number, into: Set<bigint>): Promise<boolean> {
  const smaps = await fs.readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '');
  const pagemap = await fs.open(`/proc/${pid}/pagemap`, 'r').catch(() => undefined);
  if (!smaps || !pagemap) return false;
  try {
    let range: [bigint, bigint] | undefined;
    let sawFrame = false;
    for (const line of smaps.split('\n')) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
      if (head) {
        range = [BigInt(`0x${head[1]}`), BigInt(`0x${head[2]}`)];
        continue;
      }
      const rss = /^Rss:\s+(\d+)/.exec(line);
      if (!rss || !range || rss[1] === '0') continue;
      const pages = Number((range[1] - range[0]) / 4096n);
      const buf = Buffer.alloc(pages * 8);
      await pagemap.read(buf, 0, buf.length, Number((range[0] / 4096n) * 8n));
      for (let i = 0; i < pages; i++) {
        const entry = buf.readBigUInt64LE(i * 8);
        if (!(entry >> 63n)) continue; // not present
        const frame = entry & ((1n << 55n) - 1n);
        if (frame) {
          sawFrame = true;
          into.add(frame);
        }
      }
    }
    return sawFrame;
  } finally {
    await pagemap.close();
  }
}

export interface ProcessMemory {
  pid: number;
  name: string;
  /** MB */
  rss: number;
  pss: number;
  /** Private_Clean + Private_Dirty (smaps_rollup), MB: what this process alone holds. */
  private: number;
}

export interface IdleMemory {
  /** Sum of RSS, MB. */
  total: number;
  /** Sum of PSS, MB. */
  pss: number;
  /** The group's resident set with each page counted once, MB (undefined when not root). */
  unique: number | undefined;
  parts: string[];
  processes: ProcessMemory[];
}

const kb = (text: string, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);

/**
 * RSS of every process under the appliance's launcher (itself included) except etcd, in MB; and
 * their PSS (proportional set size: a page shared by n processes counts 1/n in each), since
 * each Node process's RSS includes some 40 MB of the node binary that all of them share.
 */
export async function idleRss(app: Appliance): Promise<IdleMemory> {
  const root = (app as unknown as { child: ChildProcess }).child.pid!;
  const children = new Map<number, number[]>();
  const info = new Map<number, ProcessMemory>();
  for (const pid of (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p)).map(Number)) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const cmd = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    const rss = kb(status, 'VmRSS') / 1024;
    const rollup = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
    const pss = kb(rollup, 'Pss') / 1024;
    const priv = (kb(rollup, 'Private_Clean') + kb(rollup, 'Private_Dirty')) / 1024;
    // The entry script, not a flag naming a module (--import=.../idle-gc.js).
    const entry = cmd.find((a) => !a.startsWith('-') && a.includes('/dist/'));
    const name = entry ? path.basename(path.dirname(path.dirname(entry))) : path.basename(cmd[0] ?? '');
    info.set(pid, { pid, rss, pss, private: priv, name });
  }
  const parts: string[] = [];
  const processes: ProcessMemory[] = [];
  let total = 0;
  let pss = 0;
  const walk = (pid: number) => {
    const i = info.get(pid);
    if (i && !/etcd/.test(i.name)) {
      total += i.rss;
      pss += i.pss;
      processes.push(i);
      parts.push(`${i.name} ${i.rss.toFixed(0)}`);
    }
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  // The group's resident set with each page counted once (a page of the node binary that all
  // five map is one page of memory): what the processes hold of the machine together.
  const frames = new Set<bigint>();
  let readable = true;
  for (const { pid } of processes) readable = (await residentFrames(pid, frames)) && readable;
  return { total, pss, unique: readable ? (frames.size * 4096) / 2 ** 20 : undefined, parts, processes };
}
