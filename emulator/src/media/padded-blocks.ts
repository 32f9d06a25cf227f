import {
  DIRECT_IO_ALIGN,
  giveAlignedBuffer,
  padAlignedBuffer,
  takeAlignedBuffer,
} from './aligned-buffers.js';

/** The bytes to write for a padded block, and what to do once they are written. */
export interface PaddedWrite {
  bytes: Buffer;
  /** Gives back the copy made for the write, if one was; call once the write has ended. */
  release: () => void;
}

/**
 * A block followed by zeros up to the next DIRECT_IO_ALIGN multiple (index-file.ts padsBlock),
 * in an aligned slot so that DirectWriter writes it around the page cache: in the block's own
 * slot when that is a whole slot with room (the iSCSI transport lands a host's block so), else
 * copied into a slot of its own (a view into a transfer of several fixed-length blocks, an
 * encrypted record, a caller's ordinary buffer). The zeros are written, never whatever an
 * earlier holder left in the slot. With no slot to be had, the block alone: it is written
 * through the page cache, as before padding.
 */
export function paddedWrite(block: Buffer): PaddedWrite {
  const length = Math.ceil(block.length / DIRECT_IO_ALIGN) * DIRECT_IO_ALIGN;
  // A 4 KiB multiple has no padding: as it is (DirectWriter takes it when it is aligned).
  if (length === block.length) return { bytes: block, release: () => undefined };
  const inPlace = padAlignedBuffer(block, length);
  if (inPlace) return { bytes: inPlace, release: () => undefined };
  const copy = takeAlignedBuffer(length);
  if (!copy) return { bytes: block, release: () => undefined };
  block.copy(copy);
  copy.fill(0, block.length);
  return { bytes: copy, release: () => void giveAlignedBuffer(copy) };
}
