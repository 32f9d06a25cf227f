import type { Drive } from './library-grid';

interface Sample {
  t: number;
  written: number;
  read: number;
}

/** Counter samples per drive serial, kept across renders: the rate is their difference. */
const history = new Map<string, Sample[]>();
const KEEP = 60;

function record(d: Drive): Sample[] {
  const samples = history.get(d.serial) ?? [];
  const last = samples[samples.length - 1];
  const now = Date.now();
  if (!last || now - last.t >= 900) samples.push({ t: now, written: d.blocks_written, read: d.blocks_read });
  if (samples.length > KEEP) samples.splice(0, samples.length - KEEP);
  history.set(d.serial, samples);
  return samples;
}

/** Blocks per second between successive samples (a counter reset reads as 0). */
export function rates(samples: Sample[], key: 'written' | 'read'): number[] {
  const out: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const dt = (b.t - a.t) / 1000;
    out.push(dt > 0 ? Math.max(0, (b[key] - a[key]) / dt) : 0);
  }
  return out;
}

export function Spark({ values, label, unit = 'blk/s' }: { values: number[]; label: string; unit?: string }) {
  const w = 120;
  const h = 28;
  const max = Math.max(1, ...values);
  const points = values.map((v, i) => `${(i / Math.max(1, KEEP - 2)) * w},${h - (v / max) * h}`).join(' ');
  const last = values[values.length - 1] ?? 0;
  return (
    <figure class="spark">
      <svg
        width={w}
        height={h}
        viewBox={`0 0 ${w} ${h}`}
        role="img"
        aria-label={`${label}: ${last.toFixed(0)} ${unit}`}
      >
        <polyline points={points} fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
      <figcaption>
        {label} {last.toFixed(0)} {unit}
      </figcaption>
    </figure>
  );
}

/** Throughput per drive from the appliance's own block counters (GET /api/status). */
export function Throughput({ drives }: { drives: Drive[] }) {
  return (
    <details class="throughput">
      <summary>Drive throughput</summary>
      <div class="sparks">
        {drives.map((d) => {
          const samples = record(d);
          return (
            <div key={d.serial} class="spark-row">
              <strong>Drive {d.index}</strong>
              <Spark values={rates(samples, 'written')} label="write" />
              <Spark values={rates(samples, 'read')} label="read" />
            </div>
          );
        })}
      </div>
    </details>
  );
}

/** Bytes-done samples per job id, kept across renders, for the per-job chart. */
const jobHistory = new Map<number, Sample[]>();

/** Bytes per second of one job between successive polls of its row. */
export function jobRates(id: number, bytesDone: number): number[] {
  const samples = jobHistory.get(id) ?? [];
  const last = samples[samples.length - 1];
  const now = Date.now();
  if (!last || now - last.t >= 900) samples.push({ t: now, written: bytesDone, read: 0 });
  if (samples.length > KEEP) samples.splice(0, samples.length - KEEP);
  jobHistory.set(id, samples);
  return rates(samples, 'written');
}
