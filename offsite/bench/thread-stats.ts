/**
 * Where a benchmark's CPU went, by thread of this process, and how long those threads sat
 * runnable waiting for a core (Linux /proc/self/task/<tid>/stat and schedstat). Wall time of
 * a stage that is much more than its CPU time is either I/O or the run queue; this tells which.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU and run-queue seconds of one group of threads. */
export interface ThreadUse {
  cpu: number;
  runQueue: number;
}

export type ThreadSnapshot = Map<string, ThreadUse>;

/**
 * Thread names as Linux shows them, grouped: the event loop, the worker threads (the codec
 * pool; `exclude` leaves out others, such as a latency probe's), libuv's pool (file writes and
 * fsyncs), V8's helpers (garbage collection, compilation).
 */
function groupOf(name: string): string {
  if (name.startsWith('node-MainThread') || name === 'node') return 'event loop';
  if (name.startsWith('WorkerThread')) return 'codec threads';
  if (name.startsWith('libuv-worker')) return 'libuv pool (writes, fsync)';
  if (name.startsWith('node-V8') || name.startsWith('V8')) return 'V8 helpers (GC)';
  return 'other';
}

/** User + system CPU seconds in a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line. */
export function cpuSecondsOf(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
}

/** The kernel's thread id of the calling thread (Linux), or 0. */
export function threadId(): number {
  try {
    const st = readFileSync('/proc/thread-self/stat', 'utf8');
    return Number(st.slice(0, st.indexOf(' ')));
  } catch {
    return 0;
  }
}

/** CPU and run-queue seconds so far of every thread of this process, by group. */
export function threadSnapshot(exclude: ReadonlySet<number> = new Set()): ThreadSnapshot {
  const out: ThreadSnapshot = new Map();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    if (exclude.has(Number(tid))) continue;
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cpu = cpuSecondsOf(stat);
      // schedstat: time on a CPU, time runnable but waiting for one (ns), timeslices.
      const sched = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      const runQueue = Number(sched[1]) / 1e9;
      const g = groupOf(name);
      const u = out.get(g) ?? { cpu: 0, runQueue: 0 };
      out.set(g, { cpu: u.cpu + cpu, runQueue: u.runQueue + (Number.isFinite(runQueue) ? runQueue : 0) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** What the threads used between two snapshots (a thread that ended in between is lost). */
export function threadDelta(before: ThreadSnapshot, after: ThreadSnapshot): ThreadSnapshot {
  const out: ThreadSnapshot = new Map();
  for (const [g, a] of after) {
    const b = before.get(g) ?? { cpu: 0, runQueue: 0 };
    out.set(g, { cpu: Math.max(0, a.cpu - b.cpu), runQueue: Math.max(0, a.runQueue - b.runQueue) });
  }
  return out;
}

/** "event loop 0.12 s CPU (0.40 s waiting for a core), codec threads …" */
export function formatThreads(d: ThreadSnapshot): string {
  return [...d]
    .filter(([, u]) => u.cpu >= 0.005 || u.runQueue >= 0.005)
    .sort(([, a], [, b]) => b.cpu - a.cpu)
    .map(([g, u]) => `${g} ${u.cpu.toFixed(2)} s CPU (${u.runQueue.toFixed(2)} s waiting for a core)`)
    .join(', ');
}
