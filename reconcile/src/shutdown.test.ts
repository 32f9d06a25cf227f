import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from './wait.js';
import { HARD_EXIT_MS } from './shutdown.js';
import { identify } from './process-identity.js';

const dist = path.resolve(import.meta.dirname, '../dist/index.js');

/** A process whose clean stop never finishes (a store that does not answer), logging with pino. */
const stuckChild = `
  import { pino } from 'pino';
  import { onShutdown, watchSupervisor } from ${JSON.stringify(dist)};
  const logger = pino({ name: 'stuck' });
  watchSupervisor(logger);
  onShutdown(logger, () => new Promise(() => {}));
  setInterval(() => logger.info('working'), 20);
  console.log('ready');
`;

/**
 * Whether the process still runs. Not kill(pid, 0): that succeeds for a zombie too, and a child
 * whose supervisor died is reaped by whoever adopts it (here this VM's init, up to 2 s later).
 */
const alive = async (pid: number) => (await identify(pid)) !== undefined;

describe('bounded shutdown', () => {
  it('exits within the hard limit of SIGTERM when its stop hangs', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', stuckChild], {
      cwd: import.meta.dirname,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.resume();
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const t0 = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(HARD_EXIT_MS - 100);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 20_000);

  it('exits by itself when its supervisor is killed, though its stdout went to the dead supervisor', async () => {
    // The supervisor: spawns the child with an IPC channel and a stdout pipe, then is kill -9ed.
    const supervisorScript = `
      import { spawn } from 'node:child_process';
      const child = spawn(process.execPath, ['--input-type=module', '-e', ${JSON.stringify(stuckChild)}], {
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      child.stdout.once('data', () => console.log(String(child.pid)));
      child.stdout.resume();
    `;
    const supervisor = spawn(process.execPath, ['--input-type=module', '-e', supervisorScript], {
      cwd: import.meta.dirname,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const childPid = await new Promise<number>((resolve) =>
      supervisor.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    expect(await alive(childPid)).toBe(true);
    const t0 = Date.now();
    supervisor.kill('SIGKILL');
    await waitFor(async () => !(await alive(childPid)), { timeoutMs: 10_000, intervalMs: 50 });
    expect(Date.now() - t0).toBeLessThan(HARD_EXIT_MS + 2_000);
  }, 20_000);
});
