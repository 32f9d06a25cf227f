import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { closeSync, fchmodSync, openSync } from 'node:fs';
import path from 'node:path';
import { isoNow, type NodeStatus } from '@vtl/api';
import { EmulatorClient, type EmulatorConfig, type EmuEvent, type HelloResult } from '@vtl/emulator';
import { waitFor } from '@vtl/reconcile';
import type { Logger } from 'pino';
import { emulatorEnv } from './emulator-env.js';

/**
 * V8 starts with a small heap and, under streaming tape I/O, collects it every few MB; a 64 MB
 * start cut the emulator's CPU per GiB written by about two thirds (emulator/bench).
 */
const EMULATOR_NODE_FLAGS = ['--initial-heap-size=64'];

/**
 * How long a freshly started emulator has to answer on its control socket. A process that dies
 * first is reported at once; one still starting on a loaded machine (Node loading its modules
 * while other processes compete for two cores) may take over 20 s, so the wait is generous.
 * A spawned emulator gets it in two halves (SPAWN_ATTEMPTS). The controller's apply waits
 * longer still (DATAPLANE_RESTART_TIMEOUT_MS, 90 s).
 */
const EMULATOR_START_TIMEOUT_MS = 60_000;
/** Spawns of an emulator that does not answer, each with its share of the start deadline. */
const SPAWN_ATTEMPTS = 2;
/** How long one connection to a starting emulator waits for its hello before trying anew. */
const HELLO_ATTEMPT_MS = 5_000;

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export type DataplaneStatus = NodeStatus['dataplane'];

/**
 * Starts, adopts and restarts this node's tape emulator. The emulator runs detached in its own
 * process group so host sessions outlive a nodeagent restart; a restarted nodeagent adopts the
 * running emulator when it serves the wanted data-plane generation.
 */
export class EmulatorSupervisor {
  private client: EmulatorClient | undefined;
  status: DataplaneStatus = {
    state: 'stopped',
    generation: -1,
    pid: 0,
    detail: 'not started',
    started_at: '',
    iscsi_portal: '',
    iscsi_sessions: 0,
  };

  constructor(
    private readonly opts: {
      stateDir: string;
      entry: string;
      /** A systemd unit to restart instead of spawning the emulator (its config file is fixed). */
      unit?: string;
      logger: Logger;
      onEvent: (e: EmuEvent) => void;
      onChange: () => void;
    },
  ) {}

  /** The connected emulator, if it runs. */
  get emulator(): EmulatorClient | undefined {
    return this.status.state === 'running' ? this.client : undefined;
  }

  /** Makes the running emulator serve `config`; restarts it only when the generation differs. */
  async ensure(config: EmulatorConfig): Promise<void> {
    if (this.client && this.status.state === 'running' && this.status.generation === config.generation) {
      const alive = await this.client.hello().then(
        () => true,
        () => false,
      );
      if (alive) return;
    }
    const adopted = await this.adopt(config);
    if (adopted) return;
    await this.restart(config);
  }

  private async connect(socket: string, timeoutMs: number) {
    const client = await EmulatorClient.connect(socket, { timeoutMs });
    client.on('event', (e: EmuEvent) => this.opts.onEvent(e));
    client.on('close', () => {
      if (this.client !== client) return;
      this.setStatus({ state: 'stopped', detail: 'control socket closed' });
    });
    return client;
  }

  /**
   * The first look of a starting nodeagent, before its first status record: adopts an emulator
   * that answers on `config.socket` for `config.generation` (true), as ensure() would. One of
   * another generation is reported as being restarted, which ensure() does next, and nothing
   * answering leaves the status as it is ("stopped (not started)", now true). One attempt,
   * bounded like a start's (HELLO_ATTEMPT_MS): a hung emulator is ensure()'s to deal with.
   */
  async lookFirst(config: EmulatorConfig): Promise<boolean> {
    const found = await this.greet(config.socket);
    if (!found) return false;
    const { client, hello } = found;
    if (hello.generation !== config.generation) {
      client.close();
      this.setStatus({
        state: 'starting',
        generation: hello.generation,
        pid: hello.pid,
        detail: `generation ${hello.generation} runs; restarting it for generation ${config.generation}`,
      });
      return false;
    }
    this.attach(client, hello, config);
    this.opts.logger.info(
      { emulatorPid: hello.pid, generation: hello.generation },
      'adopted the running emulator before publishing the node status',
    );
    return true;
  }

  private async adopt(config: EmulatorConfig): Promise<boolean> {
    const client = await this.connect(config.socket, 500).catch(() => undefined);
    if (!client) return false;
    const hello = await client.hello().catch(() => undefined);
    if (hello && hello.generation === config.generation) {
      this.attach(client, hello, config);
      this.opts.logger.info(
        { emulatorPid: hello.pid, generation: hello.generation },
        'adopted the running emulator',
      );
      return true;
    }
    // Wrong generation: stop it so the restart below starts the right configuration.
    this.client?.close();
    this.client = client;
    this.status.pid = hello?.pid ?? 0;
    return false;
  }

  /** Makes `client` the emulator this supervisor talks to and reports it running. */
  private attach(client: EmulatorClient, hello: HelloResult, config: EmulatorConfig) {
    if (this.client !== client) this.client?.close();
    this.client = client;
    this.setStatus({
      state: 'running',
      generation: hello.generation,
      pid: hello.pid,
      started_at: hello.started_at,
      iscsi_portal: hello.iscsi_portal,
      detail: `serving ${config.libraries.length} libraries`,
    });
  }

  private async restart(config: EmulatorConfig) {
    await this.stop();
    this.setStatus({ state: 'starting', generation: config.generation, detail: 'starting' });
    const dir = path.dirname(config.socket);
    await fs.mkdir(dir, { recursive: true });
    // Logs are the appliance user's alone (0700 directory, 0600 files), as the appliance keeps them.
    await fs.mkdir(path.join(this.opts.stateDir, 'logs'), { recursive: true, mode: 0o700 });
    const configFile = path.join(dir, 'config.json');
    await fs.writeFile(configFile, JSON.stringify(config, null, 2));
    if (this.opts.unit === 'container') {
      // Its own container (charts/vtl): the runner there (nodeagent/src/emulator-runner.ts)
      // starts the emulator on the configuration file just written.
      this.opts.logger.info(
        { generation: config.generation },
        'emulator configuration written for its container',
      );
    } else if (this.opts.unit) {
      // Its own unit (deploy/systemd): the emulator outlives nodeagent restarts there too, and
      // journald keeps its log. The unit reads the config file written just above.
      await promisify(execFile)('systemctl', ['restart', '--no-block', this.opts.unit]).catch((err) =>
        this.opts.logger.error(
          { err, unit: this.opts.unit },
          'systemctl restart of the emulator unit failed',
        ),
      );
      this.opts.logger.info(
        { unit: this.opts.unit, generation: config.generation },
        'emulator unit restarted',
      );
    }
    // A unit's emulator is started by its service manager; one spawned here gets a second
    // chance, since a start that never answers is killed and started afresh.
    const attempts = this.opts.unit ? 1 : SPAWN_ATTEMPTS;
    for (let attempt = 1; ; attempt++) {
      const spawned = this.opts.unit ? undefined : this.spawnEmulator(configFile, config.generation);
      try {
        let started: { client: EmulatorClient; hello: HelloResult } | undefined;
        await waitFor(
          async () => {
            if (spawned?.exit) return true; // no point waiting for a process that is gone
            started = await this.greet(config.socket);
            return started !== undefined;
          },
          { timeoutMs: EMULATOR_START_TIMEOUT_MS / attempts, intervalMs: 100 },
        );
        if (!started) throw new Error(`it exited (${spawned?.exit}) before answering`);
        this.attach(started.client, started.hello, config);
        return;
      } catch (err) {
        // Nothing else knows the pid of a spawned emulator that never answered: it must not
        // be left behind (CI found such processes idle at start, holding nothing, long after).
        if (spawned?.pid && !spawned.exit) process.kill(spawned.pid, 'SIGKILL');
        if (attempt < attempts) {
          this.opts.logger.warn({ err, attempt }, 'the tape emulator did not start; starting it again');
          continue;
        }
        this.setStatus({
          state: 'failed',
          detail: `The tape emulator did not start (${(err as Error).message}); see ${path.join(this.opts.stateDir, 'logs', 'emulator.log')}.`,
        });
        return;
      }
    }
  }

  /**
   * One attempt to reach a starting emulator: connect, and a hello answered within a few
   * seconds. A connection that gets no answer is dropped and the next attempt connects afresh,
   * so one silent connection does not use up the whole start deadline. (CI once saw a hello
   * unanswered for 60 s: the emulator accepted a connection made the moment its socket
   * appeared before it handled any, fixed in its control/server.ts; this stays as a defense.)
   */
  private async greet(socket: string): Promise<{ client: EmulatorClient; hello: HelloResult } | undefined> {
    const client = await this.connect(socket, 500).catch(() => undefined);
    if (!client) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const hello = await Promise.race([
      client.hello().catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HELLO_ATTEMPT_MS))),
    ]);
    clearTimeout(timer);
    if (hello) return { client, hello };
    client.close();
    return undefined;
  }

  /** Spawns the emulator; the returned record says how it ended once it has. */
  private spawnEmulator(configFile: string, generation: number): { pid?: number; exit?: string } {
    const log = openSync(path.join(this.opts.stateDir, 'logs', 'emulator.log'), 'a', 0o600);
    fchmodSync(log, 0o600);
    const child = spawn(process.execPath, [...EMULATOR_NODE_FLAGS, this.opts.entry, '--config', configFile], {
      detached: true,
      env: emulatorEnv(),
      stdio: ['ignore', log, log],
    });
    child.unref();
    closeSync(log); // the child holds its own copy of the descriptor
    this.opts.logger.info({ emulatorPid: child.pid, generation }, 'emulator started');
    const spawned: { pid?: number; exit?: string } = { pid: child.pid };
    child.once('exit', (code, signal) => (spawned.exit = signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (err) => (spawned.exit = err.message));
    return spawned;
  }

  /** Stops the emulator (data-plane stop: host sessions drop). */
  async stop(): Promise<void> {
    const client = this.client;
    const pid = this.status.pid;
    this.client = undefined;
    if (!client) return;
    await client.shutdown().catch(() => undefined);
    client.close();
    // The next emulator binds the same socket and iSCSI port: wait until this one is gone.
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, intervalMs: 50 }).catch(() => {
      this.opts.logger.warn({ emulatorPid: pid }, 'emulator ignored shutdown; killing it');
      process.kill(pid, 'SIGKILL');
    });
    this.setStatus({ state: 'stopped', detail: 'stopped' });
  }

  /** Lets go of the emulator without stopping it (nodeagent restart: host I/O goes on). */
  detach(): void {
    this.client?.close();
    this.client = undefined;
  }

  private setStatus(patch: Partial<DataplaneStatus>) {
    this.status = { ...this.status, ...patch };
    if (patch.state === 'running' && !patch.started_at) this.status.started_at ||= isoNow();
    this.opts.onChange();
  }
}
