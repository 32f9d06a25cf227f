/**
 * Idle memory with 16 libraries × 12 drives × 400 slots (6,400 cartridges), quickly: the
 * control-plane benchmark's memory part alone, per process (RSS, private, PSS), for finding what
 * each process keeps (issue 13). `bash scripts/node-lts.sh npx vite-node e2e/bench/memory-16.ts`
 * after `npx tsc -b`. MEM_SNAPSHOTS=dir writes a heap snapshot of every Node process of the
 * group into dir once idle (after the figures); MEM_VIEWS=1 reads every view 50 times first (as
 * the benchmark's loads do, on a smaller scale); MEM_KEEP=s keeps the appliance s seconds more.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from '../src/harness/appliance.js';
import { declareFullLibrary } from './full-library.js';
import { idleRss, type IdleMemory } from './idle-memory.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const SNAPSHOTS = process.env.MEM_SNAPSHOTS;
const LIBRARIES = Number(process.env.MEM_LIBRARIES) || 16;

function print(what: string, m: IdleMemory): void {
  console.log(
    `${what}: resident ${m.unique?.toFixed(0) ?? 'n/a'} MB, sum of RSS ${m.total.toFixed(0)} MB, sum of PSS ${m.pss.toFixed(0)} MB`,
  );
  for (const p of m.processes)
    console.log(
      `  ${p.name.padEnd(10)} pid ${String(p.pid).padEnd(8)} rss ${p.rss.toFixed(0).padStart(4)}  private ${p.private.toFixed(0).padStart(4)}  pss ${p.pss.toFixed(0).padStart(4)}`,
    );
}

async function main(): Promise<void> {
  const env: Record<string, string> = {};
  if (SNAPSHOTS) {
    await fs.mkdir(SNAPSHOTS, { recursive: true });
    env.NODE_OPTIONS = `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${path.resolve(SNAPSHOTS)}`;
  }
  const app = await Appliance.start({ env });
  const started = performance.now();
  try {
    for (let n = 1; n < LIBRARIES; n++) {
      const res = await app.api.post('/api/pools', {
        name: `bench-${n}`,
        path: path.join(app.stateDir, 'pools', `bench-${n}`),
      });
      if (res.status !== 201 && res.status !== 200)
        throw new Error(`pool answered ${res.status}: ${res.text}`);
    }
    await waitFor(
      async () =>
        (await app.api.get('/api/pools')).body.filter((p: any) => p.state === 'active').length === LIBRARIES,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const pools = (await app.api.get('/api/pools')).body;
    const libs: number[] = [];
    for (const [n, pool] of pools.entries()) {
      libs.push(await declareFullLibrary(app, pool.id, n));
    }
    let t = performance.now();
    await app.apply();
    console.log(`apply of ${LIBRARIES}: ${Math.round(performance.now() - t)} ms`);
    const mints: number[] = [];
    for (const library of libs) {
      t = performance.now();
      const res = await app.api.post('/api/cartridges', { library, count: 400 });
      if (res.status !== 200 || res.body.created.length !== 400)
        throw new Error(`mint answered ${res.status}: ${res.text.slice(0, 300)}`);
      mints.push(Math.round(performance.now() - t));
    }
    console.log(`mints: ${mints.join(' ')} ms`);
    if (process.env.MEM_VIEWS)
      for (const view of ['/api/status', '/api/library', '/api/cartridges', '/api/targets'])
        for (let i = 0; i < 50; i++) {
          const res = await app.api.get(view);
          if (res.status !== 200) throw new Error(`${view} answered ${res.status}`);
        }
    console.log(`set up in ${Math.round((performance.now() - started) / 1000)} s`);
    await new Promise((r) => setTimeout(r, 15_000));
    print('idle 15 s', await idleRss(app));
    await new Promise((r) => setTimeout(r, 15_000));
    const m = await idleRss(app);
    print('idle 30 s', m);
    if (SNAPSHOTS) {
      for (const p of m.processes) {
        const before = (await fs.readdir(SNAPSHOTS)).length;
        process.kill(p.pid, 'SIGUSR2');
        await waitFor(async () => (await fs.readdir(SNAPSHOTS)).length > before, { timeoutMs: 60_000 });
        // Written once its size stops changing.
        let size = -1;
        await waitFor(
          async () => {
            const files = await fs.readdir(SNAPSHOTS);
            const file = files.find((f) => f.includes(`.${p.pid}.`));
            if (!file) return false;
            const now = (await fs.stat(path.join(SNAPSHOTS, file))).size;
            const done = now === size && now > 0;
            size = now;
            if (done)
              await fs.rename(
                path.join(SNAPSHOTS, file),
                path.join(SNAPSHOTS, `${p.name}-${p.pid}.heapsnapshot`),
              );
            return done;
          },
          { timeoutMs: 120_000, intervalMs: 1_000 },
        );
        console.log(`snapshot of ${p.name} written`);
      }
    }
    if (process.env.MEM_KEEP) {
      console.log(`keeping the appliance ${process.env.MEM_KEEP} s (state ${app.stateDir})`);
      await new Promise((r) => setTimeout(r, Number(process.env.MEM_KEEP) * 1000));
    }
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
