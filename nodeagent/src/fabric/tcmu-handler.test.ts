import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { TcmuHandlerSupervisor, handlerEndpoint } from './tcmu-handler.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../../..');
const hasGcc = await run('gcc', ['--version']).then(
  () => true,
  () => false,
);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The real vtl-tcmu, built from source, on an empty sysfs (no backstores: it scans and waits). */
describe.skipIf(!hasGcc)('the TCMU handler supervisor', () => {
  let dir: string;
  let binary: string;
  const started: TcmuHandlerSupervisor[] = [];
  const supervisor = () => {
    const s = new TcmuHandlerSupervisor({
      binary,
      endpoint: '127.0.0.1:9',
      sysfsRoot: path.join(dir, 'sys'),
      configfsRoot: path.join(dir, 'config'),
      stateDir: path.join(dir, 'state'),
      logger: pino({ level: 'silent' }),
    });
    started.push(s);
    return s;
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-tcmu-sup-'));
    binary = path.join(dir, 'vtl-tcmu');
    await run('bash', [path.join(repoRoot, 'scripts/build-vtl-tcmu.sh'), binary]);
    await fs.mkdir(path.join(dir, 'sys/class/uio'), { recursive: true });
  }, 120_000);

  afterAll(async () => {
    for (const s of started) await s.stop({ kill: true }).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('starts the handler detached, restarts it when it dies, and a new supervisor adopts it', async () => {
    const first = supervisor();
    await first.start();
    const pid = first.handlerPid;
    expect(pid).toBeGreaterThan(0);
    await waitFor(async () =>
      (await fs.readFile(path.join(dir, 'state/logs/vtl-tcmu.log'), 'utf8').catch(() => '')).includes(
        'started, emulator at 127.0.0.1:9',
      ),
    );
    // Its own process group: a signal to the nodeagent's group does not reach it.
    const pgid = (await fs.readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[2];
    expect(Number(pgid)).toBe(pid);

    process.kill(pid, 'SIGKILL');
    const second = await waitFor(
      async () =>
        first.handlerPid !== pid && first.handlerPid > 0 && alive(first.handlerPid)
          ? first.handlerPid
          : undefined,
      { timeoutMs: 15_000 },
    );

    // The nodeagent restarts: the handler goes on serving, and the next one adopts it.
    await first.stop();
    expect(alive(second)).toBe(true);
    const next = supervisor();
    await next.start();
    expect(next.handlerPid).toBe(second);

    await next.stop({ kill: true });
    await waitFor(async () => !alive(second), { timeoutMs: 5_000 });
  });

  it('names the emulator endpoint as vtl-tcmu dials it', () => {
    expect(handlerEndpoint('127.0.0.1:4000')).toBe('127.0.0.1:4000');
    expect(handlerEndpoint('/run/vtl/tcmu.sock')).toBe('unix:/run/vtl/tcmu.sock');
  });
});
