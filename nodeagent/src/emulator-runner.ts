import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { EmulatorClient } from '@vtl/emulator';
import { emulatorSocket } from './dataplane/emulator-config.js';
import { emulatorEnv } from './dataplane/emulator-env.js';
import { loadEmulatorRunnerConfig } from './emulator-runner-config.js';
import { TcmuHandlerSupervisor, handlerEndpoint } from './fabric/tcmu-handler.js';

/**
 * `vtl emulator` (deploy/image/vtl): keeps this node's tape emulator running in a container of
 * its own, beside the nodeagent's (charts/vtl), as systemd does with vtl-emulator.service. The
 * nodeagent (VTL_EMULATOR_UNIT=container) writes `$VTL_STATE_DIR/emulator/config.json` and
 * stops the old emulator over its socket; this runner starts the emulator on that file and
 * starts it again when it exits. So a nodeagent restart leaves the emulator, and the hosts'
 * sessions, alone.
 *
 * After a clean exit (a shutdown the nodeagent asked for) it waits for a newer configuration;
 * after a crash it starts the same one again after `retryMs`, even with no nodeagent around.
 */
export interface RunnerOptions {
  configFile: string;
  /** emulator/dist/main.js */
  entry: string;
  logger: Logger;
  signal: AbortSignal;
  pollMs?: number;
  retryMs?: number;
}

/** As the nodeagent starts it: a larger first heap (see the emulator supervisor). */
const EMULATOR_NODE_FLAGS = ['--initial-heap-size=64'];

export async function runEmulator(opts: RunnerOptions): Promise<void> {
  const pollMs = opts.pollMs ?? 200;
  const retryMs = opts.retryMs ?? 2_000;
  let startedOn = -1; // mtime of the configuration the last emulator started on
  let crashedAt = -Infinity;
  let child: ChildProcess | undefined;
  const stopChild = () => child?.kill('SIGTERM');
  opts.signal.addEventListener('abort', stopChild);
  try {
    while (!opts.signal.aborted) {
      const mtime = await fs.stat(opts.configFile).then(
        (s) => s.mtimeMs,
        () => undefined,
      );
      const fresh = mtime !== undefined && mtime !== startedOn;
      const retry = mtime !== undefined && crashedAt > 0 && Date.now() - crashedAt >= retryMs;
      if (!fresh && !retry) {
        await sleep(pollMs);
        continue;
      }
      startedOn = mtime!;
      crashedAt = -Infinity;
      child = spawn(process.execPath, [...EMULATOR_NODE_FLAGS, opts.entry, '--config', opts.configFile], {
        env: emulatorEnv(),
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      opts.logger.info({ emulatorPid: child.pid, config: opts.configFile }, 'emulator started');
      const running = child;
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        running.once('exit', (c, s) => resolve([c, s])),
      );
      // A configuration written while this one still runs (the nodeagent could not reach it
      // to stop it): stop it, so the loop starts the new one.
      const watch = setInterval(() => {
        void fs.stat(opts.configFile).then(
          (s) => s.mtimeMs !== startedOn && running.kill('SIGTERM'),
          () => undefined,
        );
      }, pollMs * 5);
      const [code, signal] = await exited.finally(() => clearInterval(watch));
      child = undefined;
      if (code === 0) opts.logger.info('emulator stopped; waiting for a new configuration');
      else {
        crashedAt = Date.now();
        opts.logger.error({ code, signal, retryMs }, 'emulator exited with an error; starting it again');
      }
    }
  } finally {
    opts.signal.removeEventListener('abort', stopChild);
  }
}

/**
 * `vtl emulator --probe` (the container's liveness): healthy while no configuration was written
 * yet (nothing to serve), else when the emulator answers `hello` on its control socket.
 */
export async function probeEmulator(stateDir: string, timeoutMs = 3_000): Promise<boolean> {
  const socket = emulatorSocket(stateDir);
  const configured = await fs.access(path.join(path.dirname(socket), 'config.json')).then(
    () => true,
    () => false,
  );
  if (!configured) return true;
  const client = await EmulatorClient.connect(socket, { timeoutMs }).catch(() => undefined);
  if (!client) return false;
  const hello = await client.hello().catch(() => undefined);
  client.close();
  return hello !== undefined;
}

async function main(): Promise<void> {
  const logger = pino({ name: 'emulator-runner' });
  const { stateDir, retryMs, tcmu } = loadEmulatorRunnerConfig();
  if (process.argv.includes('--probe')) process.exit((await probeEmulator(stateDir)) ? 0 : 1);
  const entry = path.resolve(import.meta.dirname, '../../emulator/dist/main.js');
  const abort = new AbortController();
  // The TCMU handler lives where the emulator does (docs/fc.md): in this container.
  if (tcmu)
    await new TcmuHandlerSupervisor({
      binary: tcmu.handler,
      endpoint: handlerEndpoint(tcmu.listen),
      sysfsRoot: tcmu.sysfsRoot,
      configfsRoot: tcmu.configfsRoot,
      stateDir,
      logger: logger.child({ component: 'tcmu' }),
    }).start();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => abort.abort());
  await runEmulator({
    configFile: path.join(path.dirname(emulatorSocket(stateDir)), 'config.json'),
    entry,
    logger,
    signal: abort.signal,
    retryMs,
  });
  process.exit(0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  main().catch((err: unknown) => {
    pino().fatal({ err }, 'emulator runner failed');
    process.exit(1);
  });
}
