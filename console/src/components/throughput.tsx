import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { Drive } from './library-grid';

/** A counter reading: unix ms, then the counters (blocks written and read, or bytes done). */
type Sample = [number, number, number];
/** One point of a chart: when, and the rate since the sample before. */
export interface Point {
  t: number;
  v: number;
}

/** How far back the charts reach (the apiserver keeps 15 minutes). */
const WINDOW_MS = 10 * 60_000;
const MIN_STEP_MS = 900;

/** Counter samples per drive serial and per job id, kept across renders and page changes. */
const driveHistory = new Map<string, Sample[]>();
const jobHistory = new Map<number, Sample[]>();

function add(history: Map<string | number, Sample[]>, key: string | number, s: Sample) {
  const samples = history.get(key) ?? [];
  const last = samples[samples.length - 1];
  if (!last || s[0] - last[0] >= MIN_STEP_MS) samples.push(s);
  while (samples.length && samples[0]![0] < s[0] - WINDOW_MS) samples.shift();
  history.set(key, samples);
  return samples;
}

/**
 * The minutes before the page was opened, from the apiserver's own sampler (GET /api/throughput):
 * fetched once, then merged in front of what the page samples itself.
 */
let seeded: Promise<void> | undefined;
export function useHistorySeed(): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    seeded ??= unwrap(api.GET('/api/throughput')).then(
      (h) => {
        const merge = (history: Map<string | number, Sample[]>, key: string | number, past: Sample[]) => {
          const mine = history.get(key) ?? [];
          const first = mine[0]?.[0] ?? Infinity;
          history.set(key, [...past.filter((s) => s[0] < first), ...mine]);
        };
        // The document types the samples as number arrays: [unix ms, counter, counter?].
        const sample = (s: number[]): Sample => [s[0] ?? 0, s[1] ?? 0, s[2] ?? 0];
        for (const d of h.drives) merge(driveHistory, d.serial, d.samples.map(sample));
        for (const j of h.jobs) merge(jobHistory, j.id, j.samples.map(sample));
      },
      () => undefined, // no history is no chart history, not an error on the page
    );
    void seeded.then(() => setReady(true));
  }, []);
  return ready;
}

/** Per second between successive samples of counter `i` (a counter reset reads as 0). */
export function rates(samples: Sample[], i: 1 | 2): Point[] {
  const out: Point[] = [];
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1]!;
    const b = samples[k]!;
    const dt = (b[0] - a[0]) / 1000;
    out.push({ t: b[0], v: dt > 0 ? Math.max(0, (b[i] - a[i]) / dt) : 0 });
  }
  return out;
}

/** A sparkline over the last WINDOW_MS: time runs left to right, so older history sits at the left. */
export function Spark({ points, label, unit = 'blk/s' }: { points: Point[]; label: string; unit?: string }) {
  const w = 120;
  const h = 28;
  const now = Date.now();
  const max = Math.max(1, ...points.map((p) => p.v));
  const xy = points
    .map((p) => `${(Math.max(0, p.t - (now - WINDOW_MS)) / WINDOW_MS) * w},${h - (p.v / max) * h}`)
    .join(' ');
  const last = points[points.length - 1]?.v ?? 0;
  return (
    <figure class="spark">
      <svg
        width={w}
        height={h}
        viewBox={`0 0 ${w} ${h}`}
        role="img"
        aria-label={`${label}: ${last.toFixed(0)} ${unit}`}
      >
        <polyline points={xy} fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
      <figcaption>
        {label} {last.toFixed(0)} {unit}
      </figcaption>
    </figure>
  );
}

/** Throughput per drive from the appliance's own block counters (GET /api/status). */
export function Throughput({ drives }: { drives: Drive[] }) {
  useHistorySeed();
  return (
    <details class="throughput">
      <summary>Drive throughput (last {WINDOW_MS / 60_000} minutes)</summary>
      <div class="sparks">
        {drives.map((d) => {
          const samples = add(driveHistory, d.serial, [Date.now(), d.blocks_written, d.blocks_read]);
          return (
            <div key={d.serial} class="spark-row" data-samples={samples.length}>
              <strong>Drive {d.index}</strong>
              <Spark points={rates(samples, 1)} label="write" />
              <Spark points={rates(samples, 2)} label="read" />
            </div>
          );
        })}
      </div>
    </details>
  );
}

/** Bytes per second of one job between successive readings of its row, history included. */
export function jobRates(id: number, bytesDone: number): Point[] {
  return rates(add(jobHistory, id, [Date.now(), bytesDone, 0]), 1);
}
