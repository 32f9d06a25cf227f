/**
 * A drive's write buffer. The drives report Buffered Mode 1 (SSC-4 8.3.3), which lets WRITE
 * answer GOOD once the block is in the buffer: the cartridge write goes on in the background
 * while the host sends the next block, so a stream costs the slower of network and disk
 * instead of their sum. A failed write is kept and reported by the next command, as a drive
 * reports a deferred error; every command but WRITE drains the buffer first, so positions,
 * filemarks, rewind and unload (the durability points) see every buffered block.
 */
export class WriteBehind {
  private readonly inFlight = new Set<Promise<void>>();
  private bytes = 0;
  private failure: { err: unknown } | undefined;

  constructor(
    private readonly maxWrites: number,
    private readonly maxBytes: number,
  ) {}

  /** Bytes buffered and not yet written. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** Starts a write in the background; returns once the buffer has room for the next one. */
  async add(bytes: number, write: Promise<unknown>): Promise<void> {
    const tracked = write.then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= { err };
      },
    );
    const done = tracked.finally(() => {
      this.inFlight.delete(done);
      this.bytes -= bytes;
    });
    this.inFlight.add(done);
    this.bytes += bytes;
    while (this.inFlight.size > this.maxWrites || (this.bytes > this.maxBytes && this.inFlight.size > 1)) {
      await Promise.race(this.inFlight);
    }
  }

  /** Waits for every buffered write; throws the first failure, once. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
    this.raiseFailure();
  }

  /** Throws a failed buffered write, once (the deferred error), without waiting for the others. */
  raiseFailure(): void {
    const f = this.failure;
    if (!f) return;
    this.failure = undefined;
    throw f.err;
  }
}
