/**
 * A fixed set of equal-sized buffers in shared memory, made on first use and handed round:
 * codec threads read and write them in place, so a transfer allocates no large buffers after
 * its first few chunks (no garbage-collection pauses on the event loop), and waiting for a
 * free one is the back-pressure that bounds memory.
 */
export class BufferRing {
  private readonly free: Uint8Array[] = [];
  private readonly waiting: ((buf: Uint8Array) => void)[] = [];
  private made = 0;

  constructor(
    private readonly count: number,
    readonly bytes: number,
  ) {}

  /** A ring of buffers made by the caller (e.g. aligned for O_DIRECT), all free. */
  static of(buffers: Uint8Array[]): BufferRing {
    const ring = new BufferRing(buffers.length, Math.min(...buffers.map((b) => b.length)));
    ring.free.push(...buffers);
    ring.made = buffers.length;
    return ring;
  }

  /** A free buffer of `bytes` bytes; waits (first come, first served) when all are in use. */
  acquire(): Promise<Uint8Array> {
    const buf = this.free.pop();
    if (buf) return Promise.resolve(buf);
    if (this.made < this.count) {
      this.made++;
      return Promise.resolve(new Uint8Array(new SharedArrayBuffer(this.bytes)));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(buf: Uint8Array): void {
    const next = this.waiting.shift();
    if (next) next(buf);
    else this.free.push(buf);
  }
}
