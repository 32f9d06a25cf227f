/**
 * Profiling aid for the control-plane benchmark (not a benchmark itself): starts the appliance
 * with cpu-profile.mjs preloaded (--cpu-prof is not allowed in NODE_OPTIONS), loads one 400-slot
 * library (PROFILE_LIBRARIES of them, one pool each), and profiles the apiserver (PROF_ONLY names another process) while the views in
 * PROFILE_VIEWS take the benchmark's load; the .cpuprofile lands in PROFILE_DIR (Chrome DevTools
 * or speedscope read it). PROFILE_HOLD=1 keeps the appliance up afterwards until PROFILE_DIR/release
 * appears (its port and token in PROFILE_DIR/held.json). `vite-node e2e/bench/profile-views.ts`.
 */
import autocannon from 'autocannon';
import { Appliance } from '../src/harness/appliance.js';
import { loadFullLibraries } from './full-library.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const dir = process.env.PROFILE_DIR ?? '/tmp/vtl-prof';
const views = (process.env.PROFILE_VIEWS ?? '/api/targets,/api/library,/api/status').split(',');

const app = await Appliance.start({
  env: {
    NODE_OPTIONS:
      process.env.PROFILE_NODE_OPTIONS ?? `--import=${new URL('./cpu-profile.mjs', import.meta.url).href}`,
    PROF_DIR: dir,
  },
});
try {
  await loadFullLibraries(app, Number(process.env.PROFILE_LIBRARIES) || 1, 'prof');
  const fs = await import('node:fs/promises');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(`${dir}/start`, '');
  for (const view of views) {
    const r = await autocannon({
      url: `https://127.0.0.1:${app.ports.https}${view}`,
      connections: 20,
      duration: Number(process.env.BENCH_SECONDS) || 5,
      headers: { authorization: `Bearer ${app.api.token}` },
    });
    console.log(view, r.requests.average, 'req/s p99', r.latency.p99, 'errors', r.errors + r.non2xx);
  }
  await fs.writeFile(`${dir}/stop`, '');
  await new Promise((r) => setTimeout(r, 2000));
  if (process.env.PROFILE_HOLD) {
    // For poking at the loaded appliance by hand: it stays up until PROFILE_DIR/release appears.
    await fs.writeFile(
      `${dir}/held.json`,
      JSON.stringify({ port: app.ports.https, token: app.api.token, state: app.stateDir }),
    );
    while (!(await fs.stat(`${dir}/release`).catch(() => undefined)))
      await new Promise((r) => setTimeout(r, 500));
  }
} finally {
  await app.destroy();
}
process.exit(0);
