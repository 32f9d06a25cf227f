/**
 * The drive's write buffer, as buffered mode 1 (SSC-4, mode parameter header) describes it:
 * a WRITE ends with GOOD once its blocks have their place on the tape, and their bytes reach
 * the cartridge image behind it, several at a time, while the host sends the next ones. That
 * keeps the disk busy with more than one request and the host from waiting on each write.
 * At most BUFFER_BYTES are on their way; a WRITE past that waits for room. A block that fails
 * on the way is owed to the host as a deferred error on its next command; every command but
 * WRITE first waits for the buffer to empty, so it sees the tape as written.
 */
const BUFFER_BYTES = 32 * 1024 * 1024;

interface Pending {
  bytes: number;
  done: Promise<void>;
}

export class WriteBuffer {
  private readonly pending: Pending[] = [];
  private bytes = 0;
  /** Blocks that failed on their way and the first failure, until the host is told. */
  private lost = 0;
  private failure: unknown;

  /** Bytes still on their way to the image. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /** Tracks a block being written behind; resolves once the buffer has room for more. */
  async add(bytes: number, written: Promise<void>): Promise<void> {
    const entry: Pending = {
      bytes,
      done: written.then(
        () => undefined,
        (err: unknown) => {
          this.lost += 1;
          this.failure ??= err;
        },
      ),
    };
    this.pending.push(entry);
    this.bytes += bytes;
    void entry.done.then(() => {
      this.pending.splice(this.pending.indexOf(entry), 1);
      this.bytes -= bytes;
    });
    while (this.bytes > BUFFER_BYTES && this.pending.length > 1) await this.pending[0]!.done;
  }

  /** A block failed and the host has not been told yet. */
  get failed(): boolean {
    return this.lost > 0;
  }

  /** Waits until every buffered block has reached the image or failed. */
  async drain(): Promise<void> {
    while (this.pending.length > 0) await this.pending.at(-1)!.done;
  }

  /** The failure owed to the host (and how many blocks it cost), once; undefined when none. */
  takeFailure(): { error: unknown; blocks: number } | undefined {
    if (this.lost === 0) return undefined;
    const owed = { error: this.failure, blocks: this.lost };
    this.lost = 0;
    this.failure = undefined;
    return owed;
  }
}
