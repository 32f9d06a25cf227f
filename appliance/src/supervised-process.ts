import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from 'pino';

/** Restart delays after a crash: doubling from 1 s up to 30 s, reset after a minute of uptime. */
const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;

/**
 * A child process of the appliance that is restarted when it dies unexpectedly. Its output goes
 * to its own log file and, line by line, to the appliance's stdout.
 */
export class SupervisedProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  private delay = RESTART_MIN_MS;
  private log: WriteStream;

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: NodeJS.ProcessEnv,
    logFile: string,
    private readonly logger: Logger,
  ) {
    // 0600 when created here; main.ts tightens files that exist already (log-files.ts).
    this.log = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  }

  start(): void {
    const startedAt = Date.now();
    // Own process group: a terminal's Ctrl-C reaches only the launcher, which stops the children
    // in order (etcd last).
    const child = spawn(process.execPath, [this.entry], {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipe(this.log, { end: false });
      stream.pipe(process.stdout, { end: false });
    }
    child.on('exit', (code, signal) => {
      this.child = undefined;
      if (this.stopping) return;
      if (Date.now() - startedAt > HEALTHY_AFTER_MS) this.delay = RESTART_MIN_MS;
      this.logger.error(
        { process: this.name, code, signal, restartInMs: this.delay },
        'process died; restarting',
      );
      setTimeout(() => !this.stopping && this.start(), this.delay).unref();
      this.delay = Math.min(this.delay * 2, RESTART_MAX_MS);
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
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
