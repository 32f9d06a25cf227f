import { adviseHugePages } from './huge-pages.js';

/**
 * Buffers at addresses aligned for O_DIRECT reads (see direct-read.ts).
 *
 * Node gives no say over where a Buffer's bytes live, but a WebAssembly.Memory is a
 * page-aligned mapping of its own. Slabs of them are cut into fixed slots, one power-of-two
 * size class per slab. A slot may be shared by several holders of views into it (blocks read
 * together, handed out one by one): it goes back when each holder has given its view back
 * (the transport returns a block once the socket has taken it). Slabs are kept for reuse, so their pages stay
 * mapped and are never faulted in twice. Each slab reserves address space (V8 puts guard
 * regions around every wasm memory), so their number is capped: past the cap, callers fall
 * back to ordinary buffers. The memories are shared, so helper threads can work on a slot's
 * bytes in place (checksum-thread.ts). Each slab asks for huge pages before it is first touched,
 * so the disk gets a slot's bytes in few large requests (huge-pages.ts).
 */

/** The part of the WebAssembly JS API used here (TypeScript types it only in its DOM library). */
interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
}
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => WasmMemory;
};

/** The alignment of every slot: a page, which satisfies any disk's logical block size. */
export const DIRECT_IO_ALIGN = 4096;
const WASM_PAGE = 65536;
/** Bytes one slab holds (at least one slot). */
const SLAB_BYTES = 32 * 1024 * 1024;
const MAX_SLABS = 16;

interface Slab {
  readonly memory: WasmMemory;
  readonly slotSize: number;
  readonly free: number[];
  /** Lent slots and how many holders each has. */
  readonly lent: Map<number, number>;
  /** Lent slots and the length of the buffer takeAlignedBuffer gave for each. */
  readonly taken: Map<number, number>;
}

const slabOf = new WeakMap<ArrayBufferLike, Slab>();
const bySize = new Map<number, Slab[]>();
let slabCount = 0;

function slotSizeFor(n: number): number {
  return Math.max(WASM_PAGE, 2 ** Math.ceil(Math.log2(n)));
}

function newSlab(slotSize: number): Slab | undefined {
  if (slabCount >= MAX_SLABS) return undefined;
  const slots = Math.max(1, Math.floor(SLAB_BYTES / slotSize));
  let memory: WasmMemory;
  try {
    const pages = (slots * slotSize) / WASM_PAGE;
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  } catch {
    return undefined; // no address space left for another mapping
  }
  adviseHugePages(new Uint8Array(memory.buffer));
  slabCount += 1;
  const slab: Slab = {
    memory,
    slotSize,
    free: Array.from({ length: slots }, (_, i) => slots - 1 - i),
    lent: new Map(),
    taken: new Map(),
  };
  slabOf.set(memory.buffer, slab);
  return slab;
}

/**
 * A buffer of n bytes whose first byte sits at a DIRECT_IO_ALIGN-aligned address, or
 * undefined when no slot can be had (the caller reads the ordinary way then).
 */
export function takeAlignedBuffer(n: number): Buffer | undefined {
  const size = slotSizeFor(n);
  const slabs = bySize.get(size) ?? [];
  bySize.set(size, slabs);
  let slab = slabs.find((s) => s.free.length > 0);
  if (!slab) {
    slab = newSlab(size);
    if (!slab) return undefined;
    slabs.push(slab);
  }
  const slot = slab.free.pop()!;
  slab.lent.set(slot, 1);
  slab.taken.set(slot, n);
  return Buffer.from(slab.memory.buffer, slot * size, n);
}

/** One more holder of the slot a view points into; each holder gives its view back once. */
export function shareAlignedBuffer(view: Buffer): void {
  const slab = slabOf.get(view.buffer);
  if (!slab) throw new Error('not a view into an aligned slot');
  const slot = Math.floor(view.byteOffset / slab.slotSize);
  const holders = slab.lent.get(slot);
  if (holders === undefined) throw new Error('the slot of this view is not lent');
  slab.lent.set(slot, holders + 1);
}

/**
 * A holder gives back its view of a slot; the slot is free again when the last one has.
 * False when the buffer is not from here.
 */
export function giveAlignedBuffer(buf: Buffer): boolean {
  const slab = slabOf.get(buf.buffer);
  if (!slab) return false;
  const slot = Math.floor(buf.byteOffset / slab.slotSize);
  const holders = slab.lent.get(slot);
  if (holders === undefined) return true;
  if (holders > 1) {
    slab.lent.set(slot, holders - 1);
  } else {
    slab.lent.delete(slot);
    slab.taken.delete(slot);
    slab.free.push(slot);
  }
  return true;
}

/**
 * `buf` followed by zeros up to `n` bytes in the same slot, when `buf` is a whole buffer that
 * takeAlignedBuffer lent (its first byte and its length) and the slot holds n bytes: the bytes
 * past it then belong to no view of anyone, and are zeroed here, never left with what an earlier
 * holder wrote there. Undefined otherwise (a view into a read run or into a transfer of several
 * blocks: the bytes after it are another block's).
 */
export function padAlignedBuffer(buf: Buffer, n: number): Buffer | undefined {
  const slab = slabOf.get(buf.buffer);
  if (!slab || n < buf.length || n > slab.slotSize || buf.byteOffset % slab.slotSize !== 0) return undefined;
  const slot = buf.byteOffset / slab.slotSize;
  if (slab.taken.get(slot) !== buf.length) return undefined;
  const padded = Buffer.from(slab.memory.buffer, buf.byteOffset, n);
  padded.fill(0, buf.length);
  return padded;
}

/** Whether a buffer's first byte sits at a DIRECT_IO_ALIGN-aligned address (only known for slots). */
export function isDirectIoAligned(buf: Buffer): boolean {
  return slabOf.has(buf.buffer) && buf.byteOffset % DIRECT_IO_ALIGN === 0;
}

/** Slots lent and not yet given back by every holder (what a leak would show as). */
export function lentAlignedSlots(): number {
  let n = 0;
  for (const slabs of bySize.values()) for (const slab of slabs) n += slab.lent.size;
  return n;
}
