/**
 * Profiling aid for the control-plane benchmark's small views (not a benchmark with targets):
 * one view of one appliance with a full 400-slot library, loaded in turn from the reference
 * (precomputed bytes), the appliance's own apiserver and further apiserver processes of the same
 * appliance, each variant another build (`entry`: a copy of apiserver/dist's server.js) or more
 * Node flags (`flags`, after the apiserver's own: a later V8 flag wins). A variant runs with the
 * apiserver's environment on a port of its own, so every server answers from the same etcd and
 * records. Printed per round and as medians: the main thread's CPU per answer, req/s and p99.
 * This VM's speed drifts by up to 1.5 × within minutes, so only an alternation like this one
 * compares two builds; docs/performance.md ("Where a small answer's CPU goes").
 *
 * `vite-node e2e/bench/apiserver-ab.ts`, with AB_VARIANTS (JSON, e.g.
 * `[{"name":"semi16","flags":["--max-semi-space-size=16"]},{"name":"old","entry":"/tmp/old/dist/server.js"}]`),
 * AB_VIEW (default /api/targets), AB_GZIP=0 for plain answers, BENCH_ROUNDS (default 6) and
 * BENCH_SECONDS (default 3).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '@vtl/api/testing/free-port';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from '../src/harness/appliance.js';
import { apiserverPid } from './apiserver-pid.js';
import { loadFullLibraries } from './full-library.js';
import { cpuMs, median, startReference } from './measure.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const VIEW = process.env.AB_VIEW ?? '/api/targets';
const GZIP = process.env.AB_GZIP !== '0';
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 6;
const SECONDS = Number(process.env.BENCH_SECONDS) || 3;
const variants: { name: string; entry?: string; flags?: string[] }[] = JSON.parse(
  process.env.AB_VARIANTS ?? '[]',
);

interface Server {
  name: string;
  url: string;
  pid: number;
}

/** Another apiserver of the appliance: its environment and flags, another entry or more flags. */
async function startVariant(
  apiPid: number,
  variant: (typeof variants)[number],
): Promise<{ child: ChildProcess; port: number }> {
  const environ = (await fs.readFile(`/proc/${apiPid}/environ`, 'utf8')).split('\0').filter(Boolean);
  const env = Object.fromEntries(
    environ.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
  // Not the launcher's IPC channel, which belongs to its own apiserver.
  for (const name of Object.keys(env)) if (name.startsWith('NODE_CHANNEL')) delete env[name];
  const [node, ...args] = (await fs.readFile(`/proc/${apiPid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
  const entry = args.pop()!;
  const port = await freePort();
  const child = spawn(node!, [...args, ...(variant.flags ?? []), variant.entry ?? entry], {
    env: { ...env, VTL_HTTPS_PORT: String(port), VTL_PLAIN_PORT: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, port };
}

const app = await Appliance.start();
const children: ChildProcess[] = [];
try {
  await loadFullLibraries(app, 1, 'ab');
  const token = app.api.token;
  const bodyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-ab-bodies-'));
  await fs.writeFile(path.join(bodyDir, `${path.basename(VIEW)}.json`), (await app.api.get(VIEW)).text);
  const ref = await startReference(path.join(app.stateDir, 'tls'), bodyDir);
  children.push(ref.child);
  const apiPid = await apiserverPid(app);
  const servers: Server[] = [
    {
      name: 'reference',
      url: `https://127.0.0.1:${ref.port}/ref/${path.basename(VIEW)}`,
      pid: ref.child.pid!,
    },
    { name: 'apiserver', url: `https://127.0.0.1:${app.ports.https}${VIEW}`, pid: apiPid },
  ];
  for (const variant of variants) {
    const { child, port } = await startVariant(apiPid, variant);
    children.push(child);
    const url = `https://127.0.0.1:${port}${VIEW}`;
    await waitFor(
      async () =>
        (await fetch(url, { headers: { authorization: `Bearer ${token}` } }).catch(() => undefined))
          ?.status === 200,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    servers.push({ name: variant.name, url, pid: child.pid! });
  }
  const headers = { authorization: `Bearer ${token}`, ...(GZIP ? { 'accept-encoding': 'gzip' } : {}) };
  // The mint's aftermath settles, then a first load of each: the JIT's warm-up is not compared.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  for (const s of servers) await autocannon({ url: s.url, connections: 20, duration: 5, headers });
  const results = new Map(servers.map((s) => [s.name, [] as { cpu: number; rps: number; p99: number }[]]));
  for (let round = 0; round < ROUNDS; round++) {
    const line: string[] = [];
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const before = await cpuMs(s.pid, s.pid);
      const r = await autocannon({ url: s.url, connections: 20, duration: SECONDS, headers });
      const cpu = (((await cpuMs(s.pid, s.pid)) - before) * 1000) / Math.max(1, r.requests.total);
      if (r.non2xx + r.errors > 0)
        throw new Error(`${s.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      results.get(s.name)!.push({ cpu, rps: r.requests.average, p99: r.latency.p99 });
      line.push(`${s.name} ${cpu.toFixed(0)} µs`);
    }
    console.log(`round ${round + 1}: ${line.join(', ')}`);
  }
  console.log(`\n${VIEW}${GZIP ? ' gzip' : ''}, ${ROUNDS} rounds of ${SECONDS} s, medians:`);
  console.log('| server | main-thread CPU per answer | req/s | p99 |\n|---|---|---|---|');
  for (const [name, runs] of results)
    console.log(
      `| ${name} | ${median(runs.map((r) => r.cpu)).toFixed(1)} µs | ${median(runs.map((r) => r.rps)).toFixed(0)} | ${median(runs.map((r) => r.p99))} ms |`,
    );
  await fs.rm(bodyDir, { recursive: true, force: true });
} finally {
  for (const child of children) child.kill();
  await app.destroy();
}
process.exit(0);
