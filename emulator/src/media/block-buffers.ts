import { giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';

/**
 * Recycled buffers for tape blocks on their way between the transport and the image files.
 *
 * Every large Buffer is an off-heap allocation that V8 counts as external memory; streaming
 * gigabytes through fresh buffers makes V8 run a full mark-compact every few dozen megabytes,
 * which cost more CPU than the I/O itself. Blocks are therefore taken from per-size free lists
 * and given back by whoever ends up owning them (the iSCSI task once the device is done with a
 * data-out, or once the socket has taken a data-in). Giving back is optional: a buffer that is
 * never returned is simply garbage collected, so only a holder that is sure nothing else
 * references the bytes returns it (devices copy what they keep).
 */

/**
 * Smaller blocks are ordinary allocations; pooling them would not pay. From 32 KiB on, blocks
 * are written padded to 4 KiB around the page cache (index-file.ts padsBlock), which wants them
 * in an aligned slot with room after them: a slot of 64 KiB or more.
 */
export const POOLED_MIN = 32 * 1024;
/** Larger blocks are rare (LTO's maximum is 8 MiB); they are allocated each time. */
const POOLED_MAX = 16 * 1024 * 1024;
/** Bytes kept idle across all size classes: enough for a few deep command queues. */
const IDLE_LIMIT = 64 * 1024 * 1024;

const free = new Map<number, ArrayBuffer[]>();
/** The backing stores this pool handed out and has not got back; guards double returns. */
const lent = new WeakSet<ArrayBuffer>();
let idleBytes = 0;

/** The power-of-two size class holding n bytes. */
function sizeClass(n: number): number {
  return 2 ** Math.ceil(Math.log2(n));
}

/**
 * A buffer of exactly n bytes with unspecified contents; pooled when n is block-sized. Block
 * sizes come from the aligned slots first, so write data the transport lands in them can go to
 * the disk without a copy (direct-write.ts); ordinary pooled buffers when those run out.
 */
export function takeBlockBuffer(n: number): Buffer {
  if (n < POOLED_MIN || n > POOLED_MAX) return Buffer.allocUnsafe(n);
  const aligned = takeAlignedBuffer(n);
  if (aligned) return aligned;
  const cls = sizeClass(n);
  const store = free.get(cls)?.pop();
  if (store) idleBytes -= cls;
  const backing = store ?? new ArrayBuffer(cls);
  lent.add(backing);
  return Buffer.from(backing, 0, n);
}

/**
 * Returns a buffer from takeBlockBuffer, or any view into an aligned read buffer, for reuse.
 * The caller must hold the only reference to its bytes; anything else (a slice, a Buffer not
 * from these pools) is ignored.
 */
export function giveBlockBuffer(buf: Buffer): void {
  if (giveAlignedBuffer(buf)) return;
  const backing = buf.buffer;
  if (!(backing instanceof ArrayBuffer) || !lent.has(backing) || buf.byteOffset !== 0) return;
  lent.delete(backing);
  const cls = backing.byteLength;
  if (idleBytes + cls > IDLE_LIMIT) return;
  const list = free.get(cls) ?? [];
  free.set(cls, list);
  list.push(backing);
  idleBytes += cls;
}
