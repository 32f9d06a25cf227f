/** Host I/O counters are looked at this often while a pass runs. */
export const PACER_SAMPLE_MS = 250;

/**
 * Host I/O quiet this long before a paused pass goes on. Longer than the node status's poll
 * (1 s), the interval at which the drives' counters move: a steady stream keeps the pass paused.
 */
export const PACER_QUIET_MS = 2_500;

/**
 * A pass paused this long in a row runs on for PACER_OVERRIDE_MS whatever the hosts do
 * (VTL_DEDUP_MAX_PAUSE_MINUTES): otherwise a node whose drives stream around the clock never
 * dedups. 30 minutes of waiting, then 5 of running, gives such a node a sixth of the time.
 */
export const PACER_MAX_PAUSE_MS = 30 * 60_000;

/** How long a pass that waited PACER_MAX_PAUSE_MS runs before it is paced again. */
export const PACER_OVERRIDE_MS = 5 * 60_000;

export interface PassPacerOptions {
  /** The pass's process (duperemove: nice and ionice exec it, so the pid is the one to stop). */
  pid: number;
  /** Bytes the node's drives moved for hosts so far (any counter that grows while they do). */
  hostBytes: () => number | Promise<number>;
  sampleMs?: number;
  quietMs?: number;
  /**
   * Paused this long in a row, the pass runs on for `overrideMs` despite host I/O, then is
   * paced again. 0: no bound (it waits for quiet however long).
   */
  maxPauseMs?: number;
  overrideMs?: number;
  /** The pass was paused or resumed. */
  onChange?: (paused: boolean) => void;
}

/**
 * Keeps a dedup pass out of the way of host I/O: the pass is stopped (SIGSTOP) while a drive
 * moves bytes and continued (SIGCONT) once the drives have been quiet for `quietMs`. nice and
 * ionice alone do not do it (docs/storage.md): the loop devices' and the disk's schedulers
 * ignore I/O priorities, and btrfs decompresses what the pass reads in kernel workers that the
 * pass's niceness does not reach. A stopped duperemove holds no lock: each FIDEDUPERANGE call
 * finishes before the process stops. A pass paused `maxPauseMs` in a row runs on for
 * `overrideMs` anyway, still at its lowest CPU and I/O priorities, so one always ends. stop() always continues a paused pass, so a SIGTERM sent
 * to it is delivered and it does not linger stopped.
 */
export class PassPacer {
  private timer: NodeJS.Timeout | undefined;
  private lastBytes: number | undefined;
  private lastMovedAt = -Infinity;
  private pausedSince: number | undefined;
  private pausedTotalMs = 0;
  /** Until when the pass runs whatever the hosts do (an override of a long pause). */
  private overrideUntil = -Infinity;
  private overrideCount = 0;
  private sampling = false;
  private stopped = false;

  constructor(private readonly opts: PassPacerOptions) {}

  start(): this {
    this.timer = setInterval(() => void this.sample(), this.opts.sampleMs ?? PACER_SAMPLE_MS);
    void this.sample();
    return this;
  }

  get paused(): boolean {
    return this.pausedSince !== undefined;
  }

  /** Milliseconds the pass has spent paused so far. */
  get pausedMs(): number {
    return this.pausedTotalMs + (this.pausedSince !== undefined ? Date.now() - this.pausedSince : 0);
  }

  /** Times a pause reached maxPauseMs and the pass ran on despite host I/O. */
  get overrides(): number {
    return this.overrideCount;
  }

  /** Ends pacing; a paused pass is continued. */
  stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.resume();
  }

  private async sample() {
    if (this.sampling || this.stopped) return;
    this.sampling = true;
    try {
      // Counters not readable this time (the emulator restarting): the pass stays as it is,
      // but a pause still ends at its bound.
      const bytes = await Promise.resolve(this.opts.hostBytes()).catch(() => undefined);
      const now = Date.now();
      if (bytes !== undefined && this.lastBytes !== undefined && bytes !== this.lastBytes)
        this.lastMovedAt = now;
      if (bytes !== undefined) this.lastBytes = bytes;
      if (this.stopped) return;
      const maxPause = this.opts.maxPauseMs ?? PACER_MAX_PAUSE_MS;
      if (this.pausedSince !== undefined && maxPause > 0 && now - this.pausedSince >= maxPause) {
        this.overrideUntil = now + (this.opts.overrideMs ?? PACER_OVERRIDE_MS);
        this.overrideCount += 1;
        this.resume();
        return;
      }
      if (bytes === undefined || now < this.overrideUntil) return;
      const hostActive = now - this.lastMovedAt < (this.opts.quietMs ?? PACER_QUIET_MS);
      if (hostActive && !this.paused) {
        if (this.signal('SIGSTOP')) {
          this.pausedSince = now;
          this.opts.onChange?.(true);
        }
      } else if (!hostActive) this.resume();
    } finally {
      this.sampling = false;
    }
  }

  private resume() {
    if (this.pausedSince === undefined) return;
    this.pausedTotalMs += Date.now() - this.pausedSince;
    this.pausedSince = undefined;
    this.signal('SIGCONT');
    this.opts.onChange?.(false);
  }

  private signal(sig: NodeJS.Signals): boolean {
    try {
      process.kill(this.opts.pid, sig);
      return true;
    } catch {
      return false; // the pass has exited meanwhile
    }
  }
}
