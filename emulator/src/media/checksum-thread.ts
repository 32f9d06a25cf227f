import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type ChecksumAlgorithm, blockChecksum } from './checksum.js';

/**
 * Block checksums computed on a helper thread. The event loop thread of the emulator carries
 * every host's socket traffic; checksumming each byte read or written there cost about a
 * sixth of its time in a streaming restore. Blocks in aligned slots live in shared memory
 * (aligned-buffers.ts), so the helper reads them in place: a message carries only where the
 * blocks are. Small blocks, other buffers, or any trouble with the thread: checksummed here,
 * once the event loop has done what it was doing. XXH3 (index version 5) never goes to the
 * helper: it is computed here at once (see checksums()).
 */

/**
 * The helper's code. It is a script rather than a module file so that it runs the same from
 * the compiled tree and from sources under test; the algorithms match checksum.ts.
 */
const HELPER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { crc32, crc32c } = require(workerData.crc32Module);
// Linux gives each thread its own nice value: a woken helper must not preempt the event loop.
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, workerData.nice);
} catch {}
parentPort.on('message', ({ id, algorithm, memory, offset, lengths }) => {
  const sums = [];
  for (const n of lengths) {
    const bytes = Buffer.from(memory, offset, n);
    sums.push((algorithm === 'crc32' ? crc32(bytes) : crc32c(bytes)) >>> 0);
    offset += n;
  }
  parentPort.postMessage({ id, sums });
});
`;

/**
 * Fewer bytes are checksummed here: waking the idle helper (a futex and, on a VM, an
 * interrupt to another CPU) cost the event loop about as much as CRC-32 over 256 KiB, and
 * more than XXH3 over any run.
 */
const OFF_THREAD_MIN_BYTES = 512 * 1024;

/** The helper's nice value: it yields the CPU to the event loop (and to the host's initiator). */
const HELPER_NICE = 10;

interface Request {
  algorithm: ChecksumAlgorithm;
  buf: Buffer;
  lengths: number[];
  resolve: (sums: number[]) => void;
}

interface Reply {
  id: number;
  sums: number[];
}

class ChecksumHelper {
  private worker: Worker | undefined;
  private broken = false;
  private nextId = 1;
  private readonly pending = new Map<number, Request>();

  /** The checksums of consecutive pieces of `buf`, `lengths` long each, in order. */
  checksums(algorithm: ChecksumAlgorithm, buf: Buffer, lengths: number[]): Promise<number[]> {
    // XXH3 at once, while a block just received is still in the CPU's cache: 256 KiB then cost
    // the event loop 4 microseconds, a third of what the same hash cost one turn later.
    if (algorithm === 'xxh3') return Promise.resolve(inline(algorithm, buf, lengths));
    const offThread = buf.buffer instanceof SharedArrayBuffer && buf.length >= OFF_THREAD_MIN_BYTES;
    const worker = offThread ? this.started() : undefined;
    // Here, but after the callbacks under way: a WRITE's status goes out before its checksum.
    if (!worker)
      return new Promise((resolve) => setImmediate(() => resolve(inline(algorithm, buf, lengths))));
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { algorithm, buf, lengths, resolve });
      // Referenced only while it has work, so an idle helper never keeps the process alive.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, algorithm, memory: buf.buffer, offset: buf.byteOffset, lengths });
    });
  }

  private started(): Worker | undefined {
    if (this.worker || this.broken) return this.worker;
    try {
      const crc32Module = createRequire(import.meta.url).resolve('@node-rs/crc32');
      const worker = new Worker(HELPER_SOURCE, {
        eval: true,
        workerData: { crc32Module, nice: HELPER_NICE },
      });
      worker.unref();
      worker.on('message', (reply: Reply) => this.answer(reply.id, reply.sums));
      worker.on('error', () => this.giveUp());
      worker.on('exit', () => this.giveUp());
      this.worker = worker;
    } catch {
      this.broken = true;
    }
    return this.worker;
  }

  private answer(id: number, sums: number[]): void {
    const request = this.pending.get(id);
    if (!request) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    request.resolve(sums);
  }

  /** The helper is gone: what it still owed is computed here, and so is everything after. */
  private giveUp(): void {
    this.broken = true;
    this.worker = undefined;
    for (const [id, r] of this.pending) this.answer(id, inline(r.algorithm, r.buf, r.lengths));
  }
}

function inline(algorithm: ChecksumAlgorithm, buf: Buffer, lengths: number[]): number[] {
  const checksum = blockChecksum(algorithm);
  let offset = 0;
  return lengths.map((n) => {
    const sum = checksum(buf.subarray(offset, offset + n));
    offset += n;
    return sum;
  });
}

const helper = new ChecksumHelper();

/**
 * The checksums of consecutive blocks lying back to back in `buf` (`lengths` in order). The
 * caller keeps `buf` unchanged until the answer is in. Never rejects.
 */
export function blockChecksums(
  algorithm: ChecksumAlgorithm,
  buf: Buffer,
  lengths: number[],
): Promise<number[]> {
  return helper.checksums(algorithm, buf, lengths);
}
