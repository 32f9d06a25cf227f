import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { identify, stillRuns } from '@vtl/reconcile/process-identity';
import type { PidFiles, PidRecord } from './pid-files.js';

/** How long a leftover has to exit after SIGTERM before it is killed. */
const LEFTOVER_GRACE_MS = 10_000;
const POLL_MS = 100;

/**
 * Stops what a previous run of this state directory left running (its launcher was killed, so
 * nobody stopped them): the control-plane processes and etcd, each verified by pid file. They
 * normally exit by themselves within seconds of their launcher's death; this covers the rest.
 * The emulator is not among them: the new nodeagent adopts it, so host sessions survive.
 */
export async function stopLeftovers(pids: PidFiles, stateDir: string, logger: Logger): Promise<PidRecord[]> {
  const recorded = await pids.running();
  // Pid files can be gone (deleted by hand, a run dir cleaned at boot, a crash between a
  // spawn and its pid file): /proc finds the rest.
  const found = await unrecordedLeftovers(stateDir, new Set(recorded.map((r) => r.pid)));
  const leftovers = [...recorded, ...found];
  // etcd last: the others may still be writing their last records.
  for (const group of [
    leftovers.filter((l) => l.name !== 'etcd'),
    leftovers.filter((l) => l.name === 'etcd'),
  ]) {
    await Promise.all(group.map((l) => stopOne(l, logger)));
  }
  for (const l of leftovers) await pids.remove(l.name);
  return leftovers;
}

async function stopOne(leftover: PidRecord, logger: Logger): Promise<void> {
  logger.warn(
    { process: leftover.name, processPid: leftover.pid },
    'a process of the previous run of this state directory still runs; stopping it',
  );
  signal(leftover.pid, 'SIGTERM');
  // A SIGSTOPped leftover never handles SIGTERM: let it go on so it can.
  signal(leftover.pid, 'SIGCONT');
  const deadline = Date.now() + LEFTOVER_GRACE_MS;
  while (Date.now() < deadline) {
    if (!(await stillRuns(leftover))) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  logger.warn({ process: leftover.name, processPid: leftover.pid }, 'leftover ignored SIGTERM; killing it');
  signal(leftover.pid, 'SIGKILL');
  while (await stillRuns(leftover)) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

function signal(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** The emulator's entry, by the end of its command line (started by the nodeagent, adopted on restarts). */
const EMULATOR_MARKER = 'emulator/dist/main.js';

/**
 * The emulator of this state directory, from /proc (its environment holds
 * VTL_STATE_DIR=<stateDir>, as every process the launcher's children start), if one runs.
 */
export async function runningEmulator(stateDir: string): Promise<PidRecord | undefined> {
  const dir = path.resolve(stateDir);
  for (const entry of await fs.readdir('/proc').catch(() => [] as string[])) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const argv = await readNul(`/proc/${pid}/cmdline`);
    if (!argv.some((a) => a.endsWith(EMULATOR_MARKER))) continue;
    if (!(await readNul(`/proc/${pid}/environ`)).includes(`VTL_STATE_DIR=${dir}`)) continue;
    const who = await identify(pid);
    if (who) return { name: 'emulator', marker: EMULATOR_MARKER, ...who };
  }
  return undefined;
}

/** What the appliance starts, by a word of the command line; the emulator is adopted instead. */
const CONTROL_PLANE: Array<[string, string]> = [
  ['apiserver', 'apiserver/dist/server.js'],
  ['controller', 'controller/dist/main.js'],
  ['nodeagent', 'nodeagent/dist/main.js'],
];

/**
 * Processes of a previous run of this state directory that no pid file names, from /proc: a
 * control-plane process whose environment holds VTL_STATE_DIR=<stateDir> (the launcher sets it
 * for each child), or an etcd whose command line holds --data-dir=<stateDir>/etcd. Both the
 * directory and the command must match, so nothing else on the host (a shell that exported the
 * same variable, another appliance) is ever touched; this process and its ancestors (npm,
 * start.sh) are skipped.
 */
export async function unrecordedLeftovers(stateDir: string, known: Set<number>): Promise<PidRecord[]> {
  const dir = path.resolve(stateDir);
  const skip = new Set([...known, ...(await ancestors(process.pid))]);
  const found: PidRecord[] = [];
  for (const entry of await fs.readdir('/proc').catch(() => [] as string[])) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || skip.has(pid)) continue;
    const argv = await readNul(`/proc/${pid}/cmdline`);
    let hit: [string, string] | undefined;
    if ((argv[0] ?? '').endsWith('etcd') && argv.includes(`--data-dir=${path.join(dir, 'etcd')}`))
      hit = ['etcd', 'etcd'];
    else {
      const role = CONTROL_PLANE.find(([, marker]) => argv.some((a) => a.endsWith(marker)));
      if (role && (await readNul(`/proc/${pid}/environ`)).includes(`VTL_STATE_DIR=${dir}`)) hit = role;
    }
    const who = hit && (await identify(pid));
    if (hit && who) found.push({ name: hit[0], marker: hit[1], ...who });
  }
  return found;
}

async function readNul(file: string): Promise<string[]> {
  return (await fs.readFile(file, 'utf8').catch(() => '')).split('\0').filter(Boolean);
}

/** pid and every parent up to init. */
async function ancestors(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (let cur = pid; cur > 1 && out.length < 64;) {
    out.push(cur);
    const stat = await fs.readFile(`/proc/${cur}/stat`, 'utf8').catch(() => '');
    cur = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
  }
  return out;
}
