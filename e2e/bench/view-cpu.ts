/**
 * The apiserver's CPU time per request of the small read views against the control-plane
 * benchmark's reference (reference-server.mjs: Fastify sending precomputed bytes), one 400-slot
 * library, at a fixed request rate so that both servers see the same batching; for working on
 * the per-request cost on a shared machine, where req/s and p99 say little (CPU per request much
 * more). Not a target check: `npm run bench:control-plane` is. `vite-node e2e/bench/view-cpu.ts`
 * after `npx tsc -b`; VIEWS=/api/targets,... (default targets and cartridges), RATE=req/s
 * (default 2000), SECONDS per load (default 5), ROUNDS alternated pairs (default 3), GZIP=0 or
 * GZIP=only; PROFILE_DIR=dir also writes a CPU profile of the apiserver over the view loads;
 * LIBRARIES=n full libraries, one pool each (default 1; 16 is the benchmark's large part).
 * First prints the apiserver's CPU with no request for 10 s and how often the status view changed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from '../src/harness/appliance.js';
import { apiserverPid } from './apiserver-pid.js';
import { declareFullLibrary } from './full-library.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const VIEWS = (process.env.VIEWS ?? '/api/targets,/api/cartridges').split(',');
const RATE = Number(process.env.RATE) || 2000;
const SECONDS = Number(process.env.SECONDS) || 5;
const ROUNDS = Number(process.env.ROUNDS) || 3;
const GZIP = process.env.GZIP === '0' ? [false] : process.env.GZIP === 'only' ? [true] : [false, true];
const PROFILE_DIR = process.env.PROFILE_DIR;
const LIBRARIES = Number(process.env.LIBRARIES) || 1;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function cpuMs(pid: number): Promise<number> {
  return (await procStat(pid)).cpu;
}

/** CPU ms (user + system), system CPU ms and minor page faults of a process so far. */
async function procStat(pid: number): Promise<{ cpu: number; system: number; faults: number }> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return { cpu: ((f[11]! + f[12]!) * 1000) / 100, system: (f[12]! * 1000) / 100, faults: f[7]! };
}

/** CPU ms of each thread of a process, by thread name (the main thread's is the process's name). */
async function threadCpu(pid: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const tid of await fs.readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await fs.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [utime, stime] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .slice(11, 13)
      .map(Number);
    out.set(name, (out.get(name) ?? 0) + ((utime! + stime!) * 1000) / 100);
  }
  return out;
}

/** µs of the server's CPU per answered request (and of its main thread), and the rate reached. */
async function load(url: string, token: string, pid: number, gzip: boolean) {
  const before = await cpuMs(pid);
  const statBefore = await procStat(pid);
  const threadsBefore = await threadCpu(pid);
  const r = await autocannon({
    url,
    connections: 20,
    duration: SECONDS,
    overallRate: RATE,
    headers: { authorization: `Bearer ${token}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) },
  });
  const cpu = (await cpuMs(pid)) - before;
  const statAfter = await procStat(pid);
  const perRequest = (x: number) => x / Math.max(1, r.requests.total);
  const threads = [...(await threadCpu(pid))]
    .map(([name, ms]) => [name, ms - (threadsBefore.get(name) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .map(([name, ms]) => `${name} ${((ms * 1000) / Math.max(1, r.requests.total)).toFixed(0)}`);
  if (process.env.THREADS)
    console.log(
      `  ${new Date().toISOString().slice(11, 19)} ${url}${gzip ? ' gzip' : ''}: ${threads.join(', ')}; system ${(perRequest(statAfter.system - statBefore.system) * 1000).toFixed(0)} µs, ` +
        `${perRequest(statAfter.faults - statBefore.faults).toFixed(2)} minor faults per request`,
    );
  if (r.non2xx + r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { us: (cpu * 1000) / Math.max(1, r.requests.total), rps: r.requests.average };
}

/** PRELOAD=file: a module of one's own preloaded instead of cpu-profile.mjs (with PROFILE_DIR). */
const PRELOAD = process.env.PRELOAD ?? new URL('./cpu-profile.mjs', import.meta.url).pathname;
const app = await Appliance.start({
  env: PROFILE_DIR ? { NODE_OPTIONS: `--import=${PRELOAD}`, PROF_DIR: PROFILE_DIR } : {},
});
let ref: ChildProcess | undefined;
try {
  for (let n = 1; n < LIBRARIES; n++) {
    const res = await app.api.post('/api/pools', {
      name: `bench-${n}`,
      path: path.join(app.stateDir, 'pools', `bench-${n}`),
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`pool answered ${res.status}`);
  }
  await waitFor(
    async () =>
      (await app.api.get('/api/pools')).body.filter((p: { state: string }) => p.state === 'active').length ===
      LIBRARIES,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const pools: { id: number }[] = (await app.api.get('/api/pools')).body;
  const libraries: number[] = [];
  for (const [n, pool] of pools.entries()) libraries.push(await declareFullLibrary(app, pool.id, n));
  await app.apply();
  for (const library of libraries) {
    const minted = await app.api.post('/api/cartridges', { library, count: 400 });
    if (minted.status !== 200) throw new Error(`mint answered ${minted.status}`);
  }
  await waitFor(async () => (await app.api.get('/api/cartridges')).body.length === 400 * LIBRARIES, {
    timeoutMs: 120_000,
  });
  const bodyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-view-cpu-'));
  for (const view of VIEWS)
    await fs.writeFile(path.join(bodyDir, `${path.basename(view)}.json`), (await app.api.get(view)).text);
  ref = spawn(
    process.execPath,
    [path.join(import.meta.dirname, 'reference-server.mjs'), path.join(app.stateDir, 'tls'), bodyDir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const refPort = await new Promise<number>((resolve) =>
    ref!.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  const pid = await apiserverPid(app);
  if (PROFILE_DIR) {
    await fs.mkdir(PROFILE_DIR, { recursive: true });
    await fs.writeFile(`${PROFILE_DIR}/start`, '');
  }
  // What the apiserver spends with no request at all: at a fixed rate, part of every request's figure.
  const idleFrom = await cpuMs(pid);
  await new Promise((r) => setTimeout(r, 10_000));
  const idleMs = ((await cpuMs(pid)) - idleFrom) / 10;
  // And how often the status view's content changes (each change rebuilds the kept views).
  let changes = 0;
  let previous = '';
  for (let i = 0; i < 10; i++) {
    const now = (await app.api.get('/api/status')).text.replace(/"updated_at":"[^"]+"/, '');
    if (previous && now !== previous) changes++;
    previous = now;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    `apiserver idle: ${idleMs.toFixed(0)} ms CPU per second; status view changed ${changes} times in 10 s`,
  );
  console.log(`apiserver µs CPU per request at ${RATE} req/s offered, ${SECONDS} s × ${ROUNDS} pairs`);
  for (const view of VIEWS)
    for (const gzip of GZIP) {
      const real: number[] = [];
      const reference: number[] = [];
      const rates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const measureView = async () => {
          const r = await load(`https://127.0.0.1:${app.ports.https}${view}`, app.api.token, pid, gzip);
          real.push(r.us);
          rates.push(r.rps);
        };
        const measureRef = async () =>
          reference.push(
            (
              await load(
                `https://127.0.0.1:${refPort}/ref/${path.basename(view)}`,
                app.api.token,
                ref!.pid!,
                gzip,
              )
            ).us,
          );
        if (round % 2) await measureView().then(measureRef);
        else await measureRef().then(measureView);
      }
      console.log(
        `${view}${gzip ? ' gzip' : ''}: ${median(real).toFixed(0)} µs (${real.map((x) => x.toFixed(0)).join(', ')}), ` +
          `reference ${median(reference).toFixed(0)} µs (${reference.map((x) => x.toFixed(0)).join(', ')}), ` +
          `${median(rates).toFixed(0)} req/s`,
      );
    }
  if (PROFILE_DIR) {
    await fs.writeFile(`${PROFILE_DIR}/stop`, '');
    await new Promise((r) => setTimeout(r, 2000));
  }
  await fs.rm(bodyDir, { recursive: true, force: true });
} finally {
  ref?.kill();
  await app.destroy();
}
process.exit(0);
