import { describe, expect, it } from 'vitest';
import type { Drive, Job } from '@vtl/api';
import { ThroughputSampler, type Counters } from './throughput-history.js';

const drive = (library: number, index: number, written: number, read: number) =>
  ({ library, index, serial: `S${library}${index}`, blocks_written: written, blocks_read: read }) as Drive;
const job = (id: number, state: Job['state'], bytes_done: number) => ({ id, state, bytes_done }) as Job;

describe('the throughput sampler', () => {
  it("keeps each drive's counters and each moving job's bytes, within the window", () => {
    const now: Counters = {
      drives: [drive(1, 0, 0, 0)],
      jobs: [job(7, 'uploading', 0), job(8, 'succeeded', 99)],
    };
    const sampler = new ThroughputSampler(() => now, { intervalMs: 1000, windowMs: 3000 });
    sampler.sample(1000);
    now.drives = [drive(1, 0, 100, 5)];
    now.jobs = [job(7, 'uploading', 4096)];
    sampler.sample(2000);
    let h = sampler.history();
    expect(h).toMatchObject({ interval_sec: 1, window_sec: 3 });
    expect(h.drives).toEqual([
      {
        library: 1,
        index: 0,
        serial: 'S10',
        samples: [
          [1000, 0, 0],
          [2000, 100, 5],
        ],
      },
    ]);
    // A finished job is not sampled: it moves no data.
    expect(h.jobs).toEqual([
      {
        id: 7,
        samples: [
          [1000, 0],
          [2000, 4096],
        ],
      },
    ]);

    // Past the window the oldest samples go; a drive no longer reported and a job no longer moving go too.
    now.drives = [drive(2, 0, 1, 1)];
    now.jobs = [job(7, 'succeeded', 8192)];
    sampler.sample(4500);
    h = sampler.history();
    expect(h.drives.map((d) => d.serial)).toEqual(['S20']);
    expect(h.jobs).toEqual([{ id: 7, samples: [[2000, 4096]] }]);
    sampler.sample(5500);
    expect(sampler.history().jobs).toEqual([]);
  });
});
