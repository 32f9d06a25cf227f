import { Cartridge } from '../media/cartridge.js';
import { cartridgeDir } from '../media/layout.js';
import { mintCartridge } from '../media/mint.js';
import { giveAlignedBuffer, takeAlignedBuffer } from '../media/aligned-buffers.js';

/**
 * Writes a stream in tape blocks of `blockBytes` to a new LTO-8 cartridge, after what minting
 * wrote (its label), with a closing filemark; returns the image directory. Each block goes from an aligned slot, as the
 * iSCSI transport lands WRITE data, so the image writer takes the same O_DIRECT path as a
 * host's writes and extents are laid out as in production (tests and bench/storage).
 */
export async function writeStreamImage(
  mediaDir: string,
  label: string,
  stream: Buffer,
  blockBytes: number,
): Promise<string> {
  await mintCartridge({ mediaDir, label, generation: 8 });
  const dir = cartridgeDir(mediaDir, label);
  const cart = await Cartridge.open(dir);
  try {
    await cart.spaceToEod();
    for (let at = 0; at < stream.length; at += blockBytes) {
      const bytes = stream.subarray(at, Math.min(at + blockBytes, stream.length));
      const block = takeAlignedBuffer(bytes.length) ?? Buffer.allocUnsafe(bytes.length);
      bytes.copy(block);
      await cart.writeBlock(block);
      giveAlignedBuffer(block);
    }
    await cart.writeFilemarks(1);
  } finally {
    await cart.close();
  }
  return dir;
}
