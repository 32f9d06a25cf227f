import type { Logger } from 'pino';
import { readMam, updateMam } from '../media/mam.js';
import type { TapeIo } from './stub-tape.js';

/** MAM VOLUME CHANGE REFERENCE (SPC-4 7.4.2.2), 4 bytes, a device attribute. */
export const VOLUME_CHANGE_REFERENCE = 0x0009;
/** Says "no usable reference"; a host (LTFS) then checks the whole medium. */
const UNUSABLE = 0xffffffff;

function encode(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

/** The next reference: one more, past 0 (which LTFS also takes as unusable) and FFFFFFFFh. */
function next(value: number): number {
  const n = (value + 1) % 0x1_0000_0000;
  return n === 0 || n === UNUSABLE ? 1 : n;
}

/**
 * The reference a cartridge had before the drive stored one, derived from each partition's
 * object count and bytes as the drive reported it then; an LTFS volume formatted then keeps
 * the coherency it recorded with that value.
 */
function fromContent(tape: TapeIo): number {
  let v = 0;
  for (let p = 0; p < tape.partitionCount; p++) {
    v =
      (Math.imul(v ^ (p + 1), 0x9e3779b1) + tape.partitionUsed(p) + tape.partitionObjects(p) * 0x10001) >>> 0;
  }
  return v === UNUSABLE || v === 0 ? 1 : v;
}

/**
 * The VOLUME CHANGE REFERENCE of a threaded cartridge, kept in its MAM. A host that reads it
 * (LTFS, after writing an index, stores it in its volume coherency attributes) can tell later
 * whether anyone changed the volume since: the value moves on the first write, write filemarks,
 * erase or format after it was read or the cartridge loaded, whatever the size or place of the
 * change, and stays the same across loads while nothing is written. Each new value is saved to
 * the MAM as it is taken, so a restart of the emulator keeps it.
 */
export class VolumeChangeReference {
  /** Whether a host may hold the current value: set on load and on each READ ATTRIBUTE. */
  private seen = true;

  private constructor(
    private readonly dir: string,
    private value: number,
    private readonly logger?: Logger,
  ) {}

  static async load(dir: string, tape: TapeIo, logger?: Logger): Promise<VolumeChangeReference> {
    const stored = (await readMam(dir)).get(VOLUME_CHANGE_REFERENCE);
    const value = stored?.length === 4 ? stored.readUInt32BE(0) : fromContent(tape);
    return new VolumeChangeReference(dir, value === 0 || value === UNUSABLE ? 1 : value, logger);
  }

  /** The attribute value a host reads; from now on a change of the volume moves it. */
  read(): Buffer {
    this.seen = true;
    return encode(this.value);
  }

  /** A command is about to change what is on the volume. */
  changing(): void {
    if (!this.seen) return;
    this.seen = false;
    this.value = next(this.value);
    updateMam(this.dir, new Map([[VOLUME_CHANGE_REFERENCE, encode(this.value)]])).catch((err: unknown) =>
      this.logger?.warn(
        { err, dir: this.dir },
        'could not save the volume change reference in the cartridge MAM',
      ),
    );
  }
}
