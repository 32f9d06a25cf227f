import { spawn } from 'node:child_process';
import { closeSync, fchmodSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

/** How often the supervisor checks that the handler still runs. */
const CHECK_INTERVAL_MS = 1_000;
/** A handler that dies this soon after its start is restarted no faster than this. */
const RESTART_BACKOFF_MS = 2_000;

export interface TcmuHandlerOptions {
  /** The vtl-tcmu binary (emulator/src/tcmu/native, built by scripts/build-vtl-tcmu.sh). */
  binary: string;
  /** The emulator's TCMU bridge as vtl-tcmu dials it: `IPV4:PORT` or `unix:PATH`. */
  endpoint: string;
  sysfsRoot: string;
  configfsRoot: string;
  stateDir: string;
  logger: Logger;
}

/** VTL_TCMU_LISTEN as the emulator reads it, in vtl-tcmu's spelling (a path is a unix socket). */
export function handlerEndpoint(listen: string): string {
  return /^\d+\.\d+\.\d+\.\d+:\d+$/.test(listen) ? listen : `unix:${path.resolve(listen)}`;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Keeps vtl-tcmu (the kernel side of the TCMU handler) running as the emulator is kept: detached,
 * in its own process group, its pid in the state directory, so a nodeagent or control-plane
 * restart leaves it serving the LIO backstores and the next nodeagent adopts it. It needs no
 * configuration beyond the emulator's endpoint: when the emulator restarts it reconnects by
 * itself, and when it dies it is started again (its successor fails what it left unanswered,
 * never runs a command twice: docs/fc.md).
 */
export class TcmuHandlerSupervisor {
  private timer: NodeJS.Timeout | undefined;
  private pid = 0;
  private startedAt = 0;
  private readonly pidFile: string;

  constructor(private readonly opts: TcmuHandlerOptions) {
    this.pidFile = path.join(opts.stateDir, 'run', 'vtl-tcmu.pid');
  }

  /** The handler's pid (0 when it is not running). */
  get handlerPid(): number {
    return this.pid;
  }

  /** Adopts a running handler or starts one, then watches it. */
  async start(): Promise<void> {
    const check = () =>
      this.ensure().catch((err: Error) =>
        this.opts.logger.error({ err }, 'the TCMU handler cannot be started; FC hosts get no answers'),
      );
    await check();
    this.timer = setInterval(() => void check(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops watching; the handler keeps running (host I/O goes on), unless `kill`. */
  async stop(opts: { kill?: boolean } = {}): Promise<void> {
    clearInterval(this.timer);
    if (!opts.kill || !this.pid || !(await this.isHandler(this.pid))) return;
    process.kill(this.pid, 'SIGTERM');
    await fs.rm(this.pidFile, { force: true });
    this.opts.logger.info({ tcmuPid: this.pid }, 'TCMU handler stopped');
    this.pid = 0;
  }

  /** Whether pid is a vtl-tcmu process (a recycled pid is someone else's). */
  private async isHandler(pid: number): Promise<boolean> {
    if (!alive(pid)) return false;
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    return cmdline.split('\0')[0] === this.opts.binary;
  }

  async ensure(): Promise<void> {
    if (this.pid && (await this.isHandler(this.pid))) return;
    if (!this.pid) {
      const recorded = Number((await fs.readFile(this.pidFile, 'utf8').catch(() => '')).trim());
      if (recorded > 0 && (await this.isHandler(recorded))) {
        this.pid = recorded;
        this.opts.logger.info({ tcmuPid: recorded }, 'adopted the running TCMU handler');
        return;
      }
    } else {
      this.opts.logger.warn({ tcmuPid: this.pid }, 'TCMU handler exited; starting it again');
      this.pid = 0;
    }
    if (Date.now() - this.startedAt < RESTART_BACKOFF_MS) return;
    await this.spawnHandler();
  }

  private async spawnHandler(): Promise<void> {
    const { binary, endpoint, sysfsRoot, configfsRoot, stateDir } = this.opts;
    await fs.access(binary, fs.constants.X_OK).catch(() => {
      throw new Error(
        `the TCMU handler ${binary} is missing or not executable (scripts/build-vtl-tcmu.sh builds it)`,
      );
    });
    await fs.mkdir(path.join(stateDir, 'logs'), { recursive: true, mode: 0o700 });
    await fs.mkdir(path.dirname(this.pidFile), { recursive: true });
    const log = openSync(path.join(stateDir, 'logs', 'vtl-tcmu.log'), 'a', 0o600);
    fchmodSync(log, 0o600);
    const child = spawn(binary, [endpoint, sysfsRoot, configfsRoot], {
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child.on('error', (err) => this.opts.logger.error({ err }, 'TCMU handler failed'));
    child.unref();
    this.startedAt = Date.now();
    if (!child.pid) throw new Error(`the TCMU handler ${binary} did not start`);
    this.pid = child.pid;
    await fs.writeFile(this.pidFile, `${child.pid}\n`);
    this.opts.logger.info({ tcmuPid: child.pid, endpoint }, 'TCMU handler started');
  }
}
