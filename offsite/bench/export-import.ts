/**
 * Export/import throughput of the offsite engine beside a shell pipeline doing the same work
 * against the same S3 server, and the latency of a Fastify server sharing the engine's thread.
 *
 *   npm run bench:offsite                      # 2 GiB, 64 MiB chunks, 3 rounds
 *   BENCH_GIB=0.25 BENCH_ROUNDS=2 npm run bench:offsite
 *   BENCH_CODEC_NICE=0 npm run bench:offsite   # codec threads at the pipeline's priority
 *   BENCH_ZSTD_LEVEL=1 npm run bench:offsite   # both contenders at zstd level 1 (default: the engine's 3)
 *
 * Engine (A): exportCartridge / importCartridge, zstd and SHA-256 on a CodecPool.
 * Pipeline (B): tar | split -b CHUNK --filter 'zstd -T0 > f; curl --aws-sigv4 -T f', and
 * back: curl each chunk | zstd -d | tar -x. After an untimed round of each, rounds run A B,
 * B A, A B…; each ratio is
 * pipeline time / engine time of one round (> 1: the engine is faster); medians are printed,
 * with issue 19's targets (export >= 1.2 x, import >= 1.0 x the pipeline, API p99 <= 20 ms).
 *
 * Where import time goes: the engine reports its stages (ImportStages: download, verify,
 * decompress on the codec threads, overlapped, with the threads' own CPU time beside the wall
 * time; write, write-back, final sync and idle waiting on the writing side), the CPU and
 * run-queue time of each group of its threads (thread-stats.ts: a stage far longer than its
 * CPU is either I/O or waiting for a core) and the event-loop delay. The pipeline's stages are
 * timed one at a time once, as the reference: curl of every chunk into one file, zstd -d of it
 * to /dev/null, tar -x of the whole tar. The engine's import ends with an fsync of every file
 * (crash safety); the pipeline's tar does not sync, so its figure leaves the disk's write-back
 * out.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import {
  CodecPool,
  DEFAULT_ZSTD_LEVEL,
  deleteFolder,
  exportCartridge,
  importCartridge,
  listObjects,
  noExportStages,
  noStages,
  type ExportStages,
  type ImportStages,
  probeRemote,
  type GenerationRef,
} from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { backupLikeData } from '../src/testing/cartridge-fixture.js';
import {
  cpuSecondsOf,
  formatThreads,
  threadDelta,
  threadSnapshot,
  type ThreadSnapshot,
} from './thread-stats.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const GIB = Number(process.env.BENCH_GIB ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHUNK = Number(process.env.BENCH_CHUNK_MIB ?? 64) * MiB;
const SIZE = Math.round(GIB * 1024) * MiB;
const LABEL = 'BENCH1L8';
/** zstd level of both contenders (BENCH_ZSTD_LEVEL; default: the engine's). */
const LEVEL = Number(process.env.BENCH_ZSTD_LEVEL ?? DEFAULT_ZSTD_LEVEL);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const perGib = (cpuSeconds: number) => (cpuSeconds / (SIZE / 2 ** 30)).toFixed(2);
const mibps = (bytes: number, ms: number) => (bytes / MiB / (ms / 1000)).toFixed(0);

/** A cartridge directory with SIZE bytes of backup-like data, written 64 MiB at a time. */
async function makeCartridge(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const meta = {
    format: 1,
    label: LABEL,
    generation: 8,
    density: 0x5e,
    capacity_bytes: 12e12,
    write_protected: false,
    stub: false,
    created: '2026-01-01T00:00:00Z',
  };
  await writeFile(join(dir, 'meta.json'), `${JSON.stringify(meta)}\n`);
  await writeFile(join(dir, 'mam.json'), '{}\n');
  await writeFile(join(dir, 'index'), backupLikeData(MiB, 99));
  const fh = await open(join(dir, 'data'), 'w');
  for (let at = 0, seed = 1; at < SIZE; at += 64 * MiB, seed++) {
    const piece = backupLikeData(Math.min(64 * MiB, SIZE - at), seed);
    await fh.write(piece, 0, piece.length, at);
  }
  await fh.close();
}

/**
 * GETs /ping from another thread over one kept-alive connection, 5 ms apart, until told;
 * answers the latencies and the CPU seconds the probe thread itself used (Linux: its
 * /proc/thread-self/stat), which the engine's CPU figure leaves out.
 */
function startLatencyProbe(url: string): {
  tid: Promise<number>;
  stop(): Promise<{ lat: number[]; cpu: number }>;
} {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const http = require('node:http');
     // One kept-alive connection and node:http, not fetch: the figure is the server's answer
     // time, not the client's per-request overhead (fetch costs about a millisecond of CPU).
     const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
     try {
       const st = require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8');
       parentPort.postMessage({ tid: Number(st.slice(0, st.indexOf(' '))) });
     } catch { parentPort.postMessage({ tid: 0 }); }
     let running = true;
     const lat = [];
     parentPort.on('message', () => { running = false; });
     (async () => {
       while (running && lat.length < 200000) {
         const t0 = performance.now();
         await new Promise((done) => {
           http.get(${JSON.stringify(url)}, { agent }, (res) => { res.resume(); res.on('end', done); }).on('error', done);
         });
         lat.push(performance.now() - t0);
         await new Promise((r) => setTimeout(r, 5));
       }
       let cpu = 0;
       try {
         const stat = require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8');
         const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
         cpu = (Number(f[11]) + Number(f[12])) / 100;
       } catch {}
       parentPort.postMessage({ lat, cpu });
     })();`,
    { eval: true },
  );
  const tid = new Promise<number>((resolve) =>
    worker.once('message', (m: { tid: number }) => resolve(m.tid)),
  );
  return {
    tid,
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (r: { lat: number[]; cpu: number }) => {
          void worker.terminate();
          resolve(r);
        });
        worker.postMessage('stop');
      }),
  };
}

interface Timing {
  exportMs: number;
  importMs: number;
  /** CPU seconds (user + system) of every thread or process doing the work. */
  exportCpu: number;
  importCpu: number;
  /** Bytes the export left in the bucket (compressed chunks, and the engine's manifest). */
  storedBytes: number;
  /** CPU seconds of the S3 server's daemons (radosgw, OSD, monitor) meanwhile. */
  exportServerCpu: number;
  importServerCpu: number;
  latency?: { export: number[]; import: number[] };
  /** Event-loop delay (ms) of the engine's thread: p99 and max, during export and import. */
  loopDelay?: { export: [number, number]; import: [number, number] };
  stages?: ImportStages;
  exportStages?: ExportStages;
  /** CPU and run-queue time of the engine's threads during the import. */
  importThreads?: ThreadSnapshot;
}

const TARGETS = { export: 1.2, import: 1.0, p99Ms: 20 };

async function engineRound(
  rgw: TestRgw,
  src: string,
  work: string,
  codec: CodecPool,
  round: number,
  pingUrl: string,
): Promise<Timing> {
  const remote = rgw.remote(`engine${round}`);
  const ref: GenerationRef = {
    system: 'bench',
    library_serial: 'LIB',
    label: LABEL,
    generation: '20260101T000000Z',
  };
  let probe = startLatencyProbe(pingUrl);
  let loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const exportStages = noExportStages();
  let server0 = await serverCpuSeconds(rgw);
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  await exportCartridge({
    remote,
    ref,
    dir: src,
    ledger: [],
    codec,
    chunkBytes: CHUNK,
    onChunk: async () => {},
    stages: exportStages,
  });
  const exportMs = performance.now() - t0;
  const exportServerCpu = (await serverCpuSeconds(rgw)) - server0;
  const storedBytes = sumSizes(await listObjects(remote));
  loop.disable();
  const exportLoop: [number, number] = [loop.percentile(99) / 1e6, loop.max / 1e6];
  const exportProbe = await probe.stop();
  const exportCpu = cpuSeconds(process.cpuUsage(cpu0)) - exportProbe.cpu;
  const exportLat = exportProbe.lat;
  const dest = join(work, `engine-import-${round}`);
  probe = startLatencyProbe(pingUrl);
  const probeTid = new Set([await probe.tid]);
  loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const stages = noStages();
  const threads0 = threadSnapshot(probeTid);
  server0 = await serverCpuSeconds(rgw);
  cpu0 = process.cpuUsage();
  t0 = performance.now();
  await importCartridge({ remote, ref, dir: dest, codec, stages });
  const importMs = performance.now() - t0;
  const importServerCpu = (await serverCpuSeconds(rgw)) - server0;
  const importThreads = threadDelta(threads0, threadSnapshot(probeTid));
  loop.disable();
  const importLoop: [number, number] = [loop.percentile(99) / 1e6, loop.max / 1e6];
  const importProbe = await probe.stop();
  const importCpu = cpuSeconds(process.cpuUsage(cpu0)) - importProbe.cpu;
  const importLat = importProbe.lat;
  await run('cmp', [join(src, 'data'), join(dest, 'data')]);
  await rm(dest, { recursive: true, force: true });
  await deleteFolder(remote, 'bench/');
  return {
    exportMs,
    importMs,
    exportCpu,
    importCpu,
    exportServerCpu,
    importServerCpu,
    storedBytes,
    latency: { export: exportLat, import: importLat },
    loopDelay: { export: exportLoop, import: importLoop },
    stages,
    exportStages,
    importThreads,
  };
}

const PIPELINE_EXPORT = `set -euo pipefail
tar -C "$SRC" --format=posix --owner=0 --group=0 --mtime=@0 -cf - meta.json mam.json index data |
  split -b "$CHUNK" -a 5 -d --filter '
    zstd -q -T0 -"$LEVEL" -c > "$WORK/$FILE.zst" &&
    curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \\
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$WORK/$FILE.zst" "$URL/$FILE.tar.zst" &&
    rm "$WORK/$FILE.zst"' - chunk-`;

const PIPELINE_IMPORT = `set -euo pipefail
mkdir -p "$DEST"
while read -r key; do
  curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \\
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$URL/$key"
done < "$KEYS" | zstd -q -d -c | tar -C "$DEST" -xf -`;

/** The import pipeline's stages one at a time: download, decompress, extract (ms each). */
const PIPELINE_STAGES = {
  download: `set -euo pipefail
while read -r key; do
  curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \\
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$URL/$key"
done < "$KEYS" > "$WORK/all.zst"`,
  decompress: 'zstd -q -d -c "$WORK/all.zst" > /dev/null',
  extract: 'tar -C "$DEST" -xf "$WORK/all.tar"',
};
/** Untimed, before the extract stage: its input on disk, written back, and an empty destination. */
const PREPARE_EXTRACT = 'zstd -q -d -c "$WORK/all.zst" > "$WORK/all.tar" && mkdir -p "$DEST" && sync';

async function pipelineStages(env: NodeJS.ProcessEnv, work: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const dest = join(work, 'stages-import');
  const timed = async (name: string, script: string) => {
    const t0 = performance.now();
    await run('bash', ['-c', script], { env: { ...env, DEST: dest }, maxBuffer: 1 << 20 });
    out[name] = performance.now() - t0;
  };
  await timed('download', PIPELINE_STAGES.download);
  await timed('decompress', PIPELINE_STAGES.decompress);
  await run('bash', ['-c', PREPARE_EXTRACT], { env: { ...env, DEST: dest } });
  await timed('extract', PIPELINE_STAGES.extract);
  await rm(dest, { recursive: true, force: true });
  await rm(join(work, 'all.zst'), { force: true });
  await rm(join(work, 'all.tar'), { force: true });
  return out;
}

async function pipelineRound(
  rgw: TestRgw,
  src: string,
  work: string,
  round: number,
  onStages?: (stages: Record<string, number>) => void,
): Promise<Timing> {
  const prefix = `pipeline${round}`;
  const env = {
    ...process.env,
    SRC: src,
    CHUNK: String(CHUNK),
    LEVEL: String(LEVEL),
    WORK: work,
    AK: rgw.access_key,
    SK: rgw.secret_key,
    URL: `http://${rgw.endpoint}/${rgw.bucket}/${prefix}`,
  };
  let server0 = await serverCpuSeconds(rgw);
  let t0 = performance.now();
  const exportCpu = await timedCpu(PIPELINE_EXPORT, { ...env, URL: `${env.URL}/data` });
  const exportMs = performance.now() - t0;
  const exportServerCpu = (await serverCpuSeconds(rgw)) - server0;
  const stored = await listObjects(rgw.remote(prefix));
  const keys = stored.map((o) => o.key).sort();
  const keysFile = join(work, `keys-${round}`);
  await writeFile(keysFile, `${keys.join('\n')}\n`);
  const dest = join(work, `pipeline-import-${round}`);
  server0 = await serverCpuSeconds(rgw);
  t0 = performance.now();
  const importCpu = await timedCpu(PIPELINE_IMPORT, { ...env, DEST: dest, KEYS: keysFile });
  const importMs = performance.now() - t0;
  const importServerCpu = (await serverCpuSeconds(rgw)) - server0;
  await run('cmp', [join(src, 'data'), join(dest, 'data')]);
  await rm(dest, { recursive: true, force: true });
  if (onStages) onStages(await pipelineStages({ ...env, KEYS: keysFile }, work));
  await deleteFolder(rgw.remote(prefix), 'data/');
  return {
    exportMs,
    importMs,
    exportCpu,
    importCpu,
    exportServerCpu,
    importServerCpu,
    storedBytes: sumSizes(stored),
  };
}

const sumSizes = (objects: { size: number }[]) => objects.reduce((n, o) => n + o.size, 0);
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;

/**
 * CPU seconds the test S3 server's daemons (pids in DIR/run/*.vtl-pid) have used so far. It
 * runs on the same two cores as the contenders, which a real appliance's remote S3 does not.
 */
async function serverCpuSeconds(rgw: TestRgw): Promise<number> {
  const runDir = join(rgw.dir, 'run');
  let total = 0;
  for (const f of (await readdir(runDir)).filter((n) => n.endsWith('.vtl-pid'))) {
    const pid = (await readFile(join(runDir, f), 'utf8')).trim();
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat) total += cpuSecondsOf(stat);
  }
  return total;
}

/** Runs a bash script; returns the CPU seconds of everything it ran (GNU time counts waited-for children). */
async function timedCpu(script: string, env: NodeJS.ProcessEnv): Promise<number> {
  const { stderr } = await run('/usr/bin/time', ['-f', 'vtl-cpu %U %S', 'bash', '-c', script], { env });
  const m = /vtl-cpu ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

/**
 * Seconds per stage. The writing side's stages add up to the wall time; the codec threads'
 * (download, verify, decompress: summed over chunks) overlap each other and the writing side,
 * and their CPU seconds beside the wall seconds tell work from waiting for a core.
 */
function formatStages(st: ImportStages | undefined, wallMs: number): string {
  if (!st) return '-';
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return (
    `wall ${s(wallMs)} = write ${s(st.writeMs)} + final sync ${s(st.syncMs)} + waiting for chunks ${s(st.waitMs)} ` +
    `(write-back behind it: ${s(st.writebackMs)}); codec threads, overlapped: download ${s(st.downloadMs)}, ` +
    `verify ${s(st.verifyMs)} (CPU ${s(st.verifyCpuMs)}), decompress ${s(st.decompressMs)} (CPU ${s(st.decompressCpuMs)})`
  );
}

/** The export loop's stages (about its wall time) and the chunks' own, overlapped (summed). */
function formatExportStages(st: ExportStages | undefined, wallMs: number): string {
  if (!st) return '-';
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return (
    `wall ${s(wallMs)} = read ${s(st.readMs)} + waiting for buffers ${s(st.bufferWaitMs)} + ` +
    `waiting for the oldest chunk ${s(st.settleWaitMs)}; chunks, overlapped: compress ${s(st.compressMs)}, ` +
    `upload ${s(st.uploadMs)}, confirm ${s(st.confirmMs)}`
  );
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'vtl-bench-'));
  const rgw = await startTestRgw();
  // BENCH_CODEC_NICE=0 runs the codec threads at the pipeline's priority, BENCH_IMPORT_NICE
  // sets the imports' downloads' (default: the product's).
  const nice = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]));
  const codec = new CodecPool({
    nice: nice('BENCH_CODEC_NICE'),
    importNice: nice('BENCH_IMPORT_NICE'),
    level: LEVEL,
  });
  const app = Fastify();
  app.get('/ping', async () => ({ ok: true }));
  const pingUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const src = join(work, 'src');
    console.log(`making a ${GIB} GiB backup-like cartridge…`);
    await makeCartridge(src);
    // Untimed warm-up, a whole round of each: the SDK and the JIT load on first use, and a
    // fresh S3 server's first writes of this size cost it about twice the CPU of later ones (5
    // against 2 CPU-s per GiB here), which only the first timed contender would pay.
    await probeRemote(rgw.remote('warmup'));
    console.log(`warm-up: one untimed round of each contender…`);
    await engineRound(rgw, src, work, codec, ROUNDS, `${pingUrl}/ping`);
    await pipelineRound(rgw, src, work, ROUNDS);
    console.log(
      `chunks of ${CHUNK / MiB} MiB, zstd -${codec.level}, ${codec.threads} codec threads at nice ${codec.nice}, ${ROUNDS} rounds A B, B A…`,
    );
    const engine: Timing[] = [];
    const pipeline: Timing[] = [];
    let reference: Record<string, number> = {};
    for (let r = 0; r < ROUNDS; r++) {
      // Neither contender always runs right after the other's write-back and the server's clean-up.
      const engineRun = () => engineRound(rgw, src, work, codec, r, `${pingUrl}/ping`);
      const pipelineRun = () =>
        pipelineRound(rgw, src, work, r, r === 0 ? (x) => (reference = x) : undefined);
      let a: Timing;
      let b: Timing;
      if (r % 2 === 0) {
        a = await engineRun();
        b = await pipelineRun();
      } else {
        b = await pipelineRun();
        a = await engineRun();
      }
      engine.push(a);
      pipeline.push(b);
      console.log(
        `round ${r + 1}: export engine ${mibps(SIZE, a.exportMs)} MiB/s, pipeline ${mibps(SIZE, b.exportMs)} MiB/s; ` +
          `import engine ${mibps(SIZE, a.importMs)} MiB/s, pipeline ${mibps(SIZE, b.importMs)} MiB/s; ` +
          `GET p99 during export ${pct(a.latency?.export ?? [], 99).toFixed(1)} ms, import ${pct(a.latency?.import ?? [], 99).toFixed(1)} ms; ` +
          `stored engine ${(a.storedBytes / MiB).toFixed(1)} MiB, pipeline ${(b.storedBytes / MiB).toFixed(1)} MiB`,
      );
      console.log(
        `  CPU s per GiB: export engine ${perGib(a.exportCpu)}, pipeline ${perGib(b.exportCpu)}; ` +
          `import engine ${perGib(a.importCpu)}, pipeline ${perGib(b.importCpu)}; ` +
          `the S3 server's meanwhile: export ${perGib(a.exportServerCpu)} / ${perGib(b.exportServerCpu)}, ` +
          `import ${perGib(a.importServerCpu)} / ${perGib(b.importServerCpu)}`,
      );
      console.log(`  engine export stages: ${formatExportStages(a.exportStages, a.exportMs)}`);
      console.log(`  engine import stages: ${formatStages(a.stages, a.importMs)}`);
      if (a.importThreads) console.log(`  engine import threads: ${formatThreads(a.importThreads)}`);
      if (a.loopDelay)
        console.log(
          `  event-loop delay p99 / max: export ${a.loopDelay.export.map((x) => x.toFixed(1)).join(' / ')} ms, ` +
            `import ${a.loopDelay.import.map((x) => x.toFixed(1)).join(' / ')} ms`,
        );
    }
    const exportRatio = median(engine.map((a, i) => (pipeline[i] as Timing).exportMs / a.exportMs));
    const importRatio = median(engine.map((a, i) => (pipeline[i] as Timing).importMs / a.importMs));
    const expLat = engine.flatMap((t) => t.latency?.export ?? []);
    const impLat = engine.flatMap((t) => t.latency?.import ?? []);
    console.log(
      `\npipeline import stages one at a time (reference): ` +
        Object.entries(reference)
          .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(2)} s (${mibps(SIZE, ms)} MiB/s of tar)`)
          .join(', '),
    );
    console.log('\nresult (medians of paired rounds):');
    console.log(
      `  CPU s per GiB (load-independent): export engine ${perGib(median(engine.map((t) => t.exportCpu)))}, ` +
        `pipeline ${perGib(median(pipeline.map((t) => t.exportCpu)))}; import engine ` +
        `${perGib(median(engine.map((t) => t.importCpu)))}, pipeline ${perGib(median(pipeline.map((t) => t.importCpu)))}`,
    );
    console.log(
      `  export: engine ${mibps(SIZE, median(engine.map((t) => t.exportMs)))} MiB/s, pipeline ${mibps(SIZE, median(pipeline.map((t) => t.exportMs)))} MiB/s, ratio ${exportRatio.toFixed(2)}x (target >= ${TARGETS.export}: ${exportRatio >= TARGETS.export ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  import: engine ${mibps(SIZE, median(engine.map((t) => t.importMs)))} MiB/s, pipeline ${mibps(SIZE, median(pipeline.map((t) => t.importMs)))} MiB/s, ratio ${importRatio.toFixed(2)}x (target >= ${TARGETS.import}: ${importRatio >= TARGETS.import ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  Fastify GET on the engine's thread during export: p50 ${pct(expLat, 50).toFixed(1)} ms, p99 ${pct(expLat, 99).toFixed(1)} ms, max ${pct(expLat, 100).toFixed(1)} ms over ${expLat.length} requests (target p99 <= ${TARGETS.p99Ms} ms: ${pct(expLat, 99) <= TARGETS.p99Ms ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  … during import: p50 ${pct(impLat, 50).toFixed(1)} ms, p99 ${pct(impLat, 99).toFixed(1)} ms, max ${pct(impLat, 100).toFixed(1)} ms over ${impLat.length} requests (target p99 <= ${TARGETS.p99Ms} ms: ${pct(impLat, 99) <= TARGETS.p99Ms ? 'met' : 'MISSED'})`,
    );
  } finally {
    await app.close();
    await codec.close();
    await rgw.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
