import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SupervisedProcess } from './supervised-process.js';

const waitFor = async (ok: () => boolean, ms: number) => {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('SupervisedProcess', () => {
  let dir = '';
  let proc: SupervisedProcess | undefined;
  afterEach(async () => {
    await proc?.stop(1_000);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts a crash-looping process at once when its release is switched, not after its backoff', async () => {
    dir = await mkdtemp(join(tmpdir(), 'vtl-supervised-'));
    const broken = join(dir, 'broken.js');
    const good = join(dir, 'good.js');
    await writeFile(broken, 'process.exit(1);\n');
    await writeFile(good, 'setInterval(() => {}, 1000);\n');
    let release = broken;
    const spawns: { entry: string; at: number }[] = [];
    proc = new SupervisedProcess(
      'test',
      () => release,
      process.env,
      join(dir, 'test.log'),
      pino({ level: 'silent' }),
      () => spawns.push({ entry: release, at: Date.now() }),
    );
    proc.start();
    // Crashes at once, then waits 1 s and 2 s: the third start is followed by a 4 s backoff.
    await waitFor(() => spawns.length === 3, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(proc.pid).toBeUndefined();
    const switchedAt = Date.now();
    release = good;
    await waitFor(() => spawns.length === 4, 3_000);
    expect(spawns[3]).toMatchObject({ entry: good });
    expect(spawns[3]!.at - switchedAt).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(spawns).toHaveLength(4);
    expect(proc.pid).toBeDefined();
  }, 20_000);
});
