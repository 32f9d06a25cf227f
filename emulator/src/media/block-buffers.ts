/**
 * Recycled buffers for tape blocks on their way between the transport and the image files.
 *
 * Every large Buffer is an off-heap allocation that V8 counts as external memory; streaming
 * gigabytes through fresh buffers makes V8 run a full mark-compact every few dozen megabytes,
 * which cost more CPU than the I/O itself. Blocks are therefore taken from per-size free lists
 * and given back by their holders (the iSCSI task once the device is done with a data-out or the
 * socket has taken a data-in, a cartridge once a buffered write is on file). Giving back is
 * optional: a buffer that is never returned is simply garbage collected; giving back one that
 * is still in use is a bug, which is why each extra holder registers with keepBlockBuffer.
 */

/** Smaller blocks come from Node's own slab allocator; pooling them would not pay. */
export const POOLED_MIN = 64 * 1024;
/** Larger blocks are rare (LTO's maximum is 8 MiB); they are allocated each time. */
const POOLED_MAX = 16 * 1024 * 1024;
/** Bytes kept idle across all size classes: enough for a few deep command queues. */
const IDLE_LIMIT = 64 * 1024 * 1024;

const free = new Map<number, ArrayBuffer[]>();
/** Holders of each backing store this pool lent out; it is recycled when the last lets go. */
const holders = new WeakMap<ArrayBuffer, number>();
let idleBytes = 0;

/** The power-of-two size class holding n bytes. */
function sizeClass(n: number): number {
  return 2 ** Math.ceil(Math.log2(n));
}

/** A buffer of exactly n bytes with unspecified contents; pooled when n is block-sized. */
export function takeBlockBuffer(n: number): Buffer {
  if (n < POOLED_MIN || n > POOLED_MAX) return Buffer.allocUnsafe(n);
  const cls = sizeClass(n);
  const store = free.get(cls)?.pop();
  if (store) idleBytes -= cls;
  const backing = store ?? new ArrayBuffer(cls);
  holders.set(backing, 1);
  return Buffer.from(backing, 0, n);
}

/**
 * Registers one more holder of a buffer (or of a slice of it) that must outlive the current
 * owner's use, such as a write still in flight. Each keep is matched by one give.
 */
export function keepBlockBuffer(buf: Buffer): void {
  const backing = buf.buffer;
  const n = backing instanceof ArrayBuffer ? holders.get(backing) : undefined;
  if (n !== undefined) holders.set(backing as ArrayBuffer, n + 1);
}

/**
 * A holder lets go of a buffer from takeBlockBuffer (or a slice of it); the bytes are reused
 * once every holder has. Buffers this pool did not lend are ignored.
 */
export function giveBlockBuffer(buf: Buffer): void {
  const backing = buf.buffer;
  if (!(backing instanceof ArrayBuffer)) return;
  const n = holders.get(backing);
  if (n === undefined) return;
  if (n > 1) {
    holders.set(backing, n - 1);
    return;
  }
  holders.delete(backing);
  const cls = backing.byteLength;
  if (idleBytes + cls > IDLE_LIMIT) return;
  const list = free.get(cls) ?? [];
  free.set(cls, list);
  list.push(backing);
  idleBytes += cls;
}
