import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from 'pino';
import { terminalSink } from './banner.js';
import { relayLines } from './log-relay.js';

/** Restart delays after a crash: doubling from 1 s up to 30 s, reset after a minute of uptime. */
const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;
/** While a crashed process waits to restart, how often its release link is looked at. */
const RELEASE_CHECK_MS = 1_000;

/**
 * A child process of the appliance that is restarted when it dies unexpectedly. Its output goes
 * to its own log file and, line by line and as JSON (log-relay.ts), to the appliance's stdout.
 */
export class SupervisedProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  private delay = RESTART_MIN_MS;
  private restartTimer: NodeJS.Timeout | undefined;
  private releaseCheck: NodeJS.Timeout | undefined;
  private log: WriteStream;
  /** The appliance's stdout, or a terminal's pretty printer: one for every start of this process. */
  private readonly out = terminalSink();

  constructor(
    readonly name: string,
    /** Resolved at each start: a restart after an update runs the switched-to release. */
    private readonly entry: string | (() => string),
    private readonly env: NodeJS.ProcessEnv,
    logFile: string,
    private readonly logger: Logger,
    /** Told each new pid (the launcher records it in a pid file). */
    private readonly onSpawn: (pid: number) => void = () => undefined,
    /** Node flags before the entry (memory-tuning.ts). */
    private readonly execArgv: string[] = [],
  ) {
    // 0600 when created here; main.ts tightens files that exist already (log-files.ts).
    this.log = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  }

  start(): void {
    const startedAt = Date.now();
    // Own process group: a terminal's Ctrl-C reaches only the launcher, which stops the children
    // in order (etcd last). The IPC channel is how a child learns that the launcher died
    // (watchSupervisor in @vtl/reconcile): the kernel closes it whatever killed the launcher.
    const entry = typeof this.entry === 'string' ? this.entry : this.entry();
    const child = spawn(process.execPath, [...this.execArgv, entry], {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    this.child = child;
    if (child.pid) this.onSpawn(child.pid);
    // The channel carries no messages; it must not keep the launcher alive either.
    child.channel?.unref();
    child.on('error', (err) =>
      this.logger.error({ process: this.name, err }, 'process could not be started'),
    );
    relayLines(
      this.name,
      { stdout: child.stdout!, stderr: child.stderr! },
      { file: this.log, out: this.out },
    );
    child.on('exit', (code, signal) => {
      this.child = undefined;
      if (this.stopping) return;
      if (Date.now() - startedAt > HEALTHY_AFTER_MS) this.delay = RESTART_MIN_MS;
      this.logger.error(
        { process: this.name, code, signal, restartInMs: this.delay },
        'process died; restarting',
      );
      // Not unref'd: while every child is down (etcd gone, all of them restarting) this timer is
      // what keeps the launcher alive; unref'd, the launcher exited silently with nothing running.
      this.restartTimer = setTimeout(() => this.restartNow(), this.delay);
      this.delay = Math.min(this.delay * 2, RESTART_MAX_MS);
      if (typeof this.entry === 'function') this.watchRelease(this.entry, entry);
    });
  }

  /**
   * A process that crashed in a loop waits up to RESTART_MAX_MS to start again, but once the
   * release it runs from is switched (an update's rollback away from a release that crashed at
   * start) it starts at once with the delay reset: a waiting rollback would otherwise have found
   * the previous release not answering for up to half a minute.
   */
  private watchRelease(resolve: () => string, crashed: string): void {
    this.releaseCheck = setInterval(() => {
      let current: string;
      try {
        current = resolve();
      } catch {
        return;
      }
      if (current === crashed) return;
      this.logger.info({ process: this.name, entry: current }, 'release switched; starting at once');
      this.delay = RESTART_MIN_MS;
      this.restartNow();
    }, RELEASE_CHECK_MS);
    this.releaseCheck.unref();
  }

  private restartNow(): void {
    clearTimeout(this.restartTimer);
    clearInterval(this.releaseCheck);
    if (!this.stopping && !this.child) this.start();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. The children exit by
   * themselves within HARD_EXIT_MS (@vtl/reconcile) of SIGTERM; the grace is a little longer.
   */
  async stop(graceMs = 8_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.releaseCheck);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
    this.log.end();
  }
}
