/**
 * The control-plane benchmark's SSE part alone (issue 13: an event to 500 clients, p99 ≤ 100
 * ms), several rounds against one appliance with one full 400-slot library, as the benchmark
 * has when it measures it. Each round connects 500 clients (in worker threads,
 * sse-clients.mjs), mints one cartridge five times and prints p50, p99 and max of the 2,500
 * delays, and the load average. `bash scripts/node-lts.sh npx vite-node e2e/bench/sse-fanout.ts`
 * after `npx tsc -b`; SSE_ROUNDS=n (default 3), SSE_IDLE_S=s idle before each round (default 15);
 * also prints the apiserver's CPU while the 500 streams idle. SSE_TRACE_GC=dir logs every
 * collection of 5 ms or more (a PerformanceObserver loaded with --import) and copies the logs there.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from '../src/harness/appliance.js';
import { declareFullLibrary } from './full-library.js';
import { apiserverPid } from './apiserver-pid.js';
import { cpuMs } from './measure.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const CLIENTS = 500;
const ROUNDS = Number(process.env.SSE_ROUNDS) || 3;
const IDLE_S = Number(process.env.SSE_IDLE_S ?? 15);

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function round(
  app: Appliance,
  library: number,
): Promise<{ delays: number[]; perEvent: number[]; idleCpu: number }> {
  const carts: { label: string }[] = (await app.api.get('/api/cartridges')).body;
  for (const { label } of carts.slice(0, 5)) {
    const res = await app.api.delete(`/api/cartridges/${label}`, { confirm: label });
    if (res.status !== 200) throw new Error(`delete answered ${res.status}: ${res.text}`);
  }
  await waitFor(async () => (await app.api.get('/api/cartridges')).body.length === carts.length - 5, {
    timeoutMs: 30_000,
  });
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const threads = Math.max(2, os.cpus().length);
  const delays: number[] = [];
  let connected = 0;
  const workers = Array.from({ length: threads }, (_, i) => {
    const count = Math.floor(CLIENTS / threads) + (i < CLIENTS % threads ? 1 : 0);
    const worker = new Worker(new URL('./sse-clients.mjs', import.meta.url), {
      workerData: { url: `https://127.0.0.1:${app.ports.https}/api/events`, token: app.api.token, count },
    });
    worker.on('message', (m: { connected?: number; delays?: number[] }) => {
      if (m.connected) connected += m.connected;
      if (m.delays) delays.push(...m.delays);
    });
    return worker;
  });
  const perEvent: number[] = [];
  let idleCpu = NaN;
  try {
    await waitFor(() => connected === CLIENTS, { timeoutMs: 60_000, intervalMs: 100 });
    // The apiserver's CPU while the 500 streams idle (5 s, after 2 s to settle).
    await new Promise((r) => setTimeout(r, 2_000));
    const pid = await apiserverPid(app);
    const cpuBefore = await cpuMs(pid);
    await new Promise((r) => setTimeout(r, 5_000));
    idleCpu = ((await cpuMs(pid)) - cpuBefore) / 5;
    for (let i = 0; i < 5; i++) {
      const before = delays.length;
      const res = await app.api.post('/api/cartridges', { library, count: 1 });
      if (res.status !== 200) throw new Error(`mint answered ${res.status}: ${res.text}`);
      if (process.env.SSE_TRACE_GC) console.log(`event ${i + 1} minted at ${new Date().toISOString()}`);
      await waitFor(() => delays.length >= before + CLIENTS, { timeoutMs: 30_000, intervalMs: 20 });
      perEvent.push(Math.max(...delays.slice(before)));
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return { delays, perEvent, idleCpu };
}

async function main(): Promise<void> {
  const app = await Appliance.start({
    env: {
      VTL_MAX_CONNECTIONS_PER_CLIENT: '2048',
      ...(process.env.SSE_TRACE_GC
        ? { NODE_OPTIONS: `--import=${new URL('./gc-trace.mjs', import.meta.url).href}` }
        : {}),
    },
  });
  try {
    const first = (await app.api.get('/api/pools')).body[0];
    const library = await declareFullLibrary(app, first.id, 0);
    await app.apply();
    const res = await app.api.post('/api/cartridges', { library, count: 400 });
    if (res.status !== 200) throw new Error(`mint answered ${res.status}: ${res.text.slice(0, 300)}`);
    const all: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { delays, perEvent, idleCpu } = await round(app, library);
      all.push(...delays);
      console.log(
        `round ${r + 1}: ${delays.length} deliveries, p50 ${pct(delays, 50)} ms, p99 ${pct(delays, 99)} ms, ` +
          `max per event ${perEvent.join(' ')} ms, apiserver idle with 500 streams ${idleCpu.toFixed(0)} ms CPU/s, load ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}`,
      );
    }
    if (process.env.SSE_TRACE_GC)
      await fs.cp(path.join(app.stateDir, 'logs'), process.env.SSE_TRACE_GC, { recursive: true });
    console.log(`all: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms (${all.length} deliveries)`);
  } finally {
    await app.destroy();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
