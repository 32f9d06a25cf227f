import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-file.js';
import { MediaError, isErrno } from './errors.js';
import { IMAGE_FILES } from './layout.js';

/**
 * Medium auxiliary memory (the cartridge chip, SPC-4 §7.4 attributes). The image stores raw
 * attribute values by id; the drive model owns formats, read-only rules and the device
 * attributes it computes (remaining capacity and the like) rather than storing them.
 */
export const MAM = {
  MEDIUM_MANUFACTURER: 0x0400,
  MEDIUM_SERIAL_NUMBER: 0x0401,
  MEDIUM_LENGTH: 0x0402,
  MEDIUM_WIDTH: 0x0403,
  ASSIGNING_ORGANIZATION: 0x0404,
  MEDIUM_DENSITY_CODE: 0x0405,
  MEDIUM_MANUFACTURE_DATE: 0x0406,
  MAM_CAPACITY: 0x0407,
  MEDIUM_TYPE: 0x0408,
  MEDIUM_TYPE_INFORMATION: 0x0409,
  APPLICATION_VENDOR: 0x0800,
  APPLICATION_NAME: 0x0801,
  APPLICATION_VERSION: 0x0802,
  USER_MEDIUM_TEXT_LABEL: 0x0803,
  DATE_TIME_LAST_WRITTEN: 0x0804,
  BARCODE: 0x0806,
  OWNING_HOST_TEXTUAL_NAME: 0x0807,
  MEDIA_POOL: 0x0808,
} as const;

/** id → value. Ids are 16-bit; values are at most a few hundred bytes. */
export type MamAttributes = Map<number, Buffer>;

interface MamFile {
  format: 1;
  /** Four hex digits of the id → hex of the value, so the file diffs and reads by eye. */
  attributes: Record<string, string>;
  /**
   * Host attributes a host wrote for partition n > 0 of a partitioned cartridge, by "n" (LTFS
   * keeps a volume coherency record per partition); partition 0's are `attributes`.
   */
  partitions?: Record<string, Record<string, string>>;
}

/** A space-padded fixed-width ASCII field, as SPC-4 ASCII attributes are. */
export function asciiField(text: string, width: number): Buffer {
  return Buffer.from(text.slice(0, width).padEnd(width, ' '), 'ascii');
}

/** An 8-byte binary attribute holding a count (floored, never negative). */
export function binaryField(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(n))));
  return b;
}

/** The chip contents of a freshly minted data cartridge. */
export function defaultMam(opts: {
  label: string;
  density: number;
  created: Date;
  worm?: boolean;
}): MamAttributes {
  const date = opts.created.toISOString().slice(0, 10).replaceAll('-', '');
  return new Map<number, Buffer>([
    [MAM.MEDIUM_MANUFACTURER, asciiField('IBM', 8)],
    [MAM.MEDIUM_SERIAL_NUMBER, asciiField(`VTL${opts.label}`, 32)],
    [MAM.ASSIGNING_ORGANIZATION, asciiField('LTO-CVE', 8)],
    [MAM.MEDIUM_DENSITY_CODE, Buffer.from([opts.density])],
    [MAM.MEDIUM_MANUFACTURE_DATE, asciiField(date, 8)],
    // 0x00: data medium (0x01 would be a cleaning cartridge, 0x80 WORM).
    [MAM.MEDIUM_TYPE, Buffer.from([opts.worm ? 0x80 : 0x00])],
    [MAM.BARCODE, asciiField(opts.label, 32)],
  ]);
}

async function readMamFile(dir: string): Promise<MamFile> {
  let text: string;
  try {
    text = await readFile(join(dir, IMAGE_FILES.mam), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { format: 1, attributes: {} };
    throw err;
  }
  try {
    return JSON.parse(text) as MamFile;
  } catch {
    throw new MediaError('corrupt', `${join(dir, IMAGE_FILES.mam)} is not valid JSON`);
  }
}

function decode(record: Record<string, string> | undefined): MamAttributes {
  const attrs: MamAttributes = new Map();
  for (const [id, hex] of Object.entries(record ?? {})) {
    attrs.set(Number.parseInt(id, 16), Buffer.from(hex, 'hex'));
  }
  return attrs;
}

function encode(attrs: MamAttributes): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of [...attrs.keys()].sort((a, b) => a - b)) {
    if (!Number.isInteger(id) || id < 0 || id > 0xffff) {
      throw new MediaError('invalid', `MAM attribute id ${id} is not a 16-bit number`);
    }
    out[id.toString(16).padStart(4, '0')] = attrs.get(id)!.toString('hex');
  }
  return out;
}

async function writeMamFile(dir: string, file: MamFile): Promise<void> {
  await writeFileAtomic(join(dir, IMAGE_FILES.mam), `${JSON.stringify(file, null, 2)}\n`);
}

/** Attributes of the whole cartridge, seen from every partition: the medium's, and its barcode. */
function cartridgeWide(id: number): boolean {
  return id < 0x0800 || id === MAM.BARCODE;
}

/** The change of each cartridge's MAM file still going on, so that the next waits for it. */
const changing = new Map<string, Promise<unknown>>();

/**
 * Runs the read-modify-write `change` of a cartridge's MAM file after those already asked for:
 * the drive records its usage and volume change reference while a host writes attributes, and
 * two changes read at once would lose one of them.
 */
function oneAtATime<T>(dir: string, change: () => Promise<T>): Promise<T> {
  const run = (changing.get(dir) ?? Promise.resolve()).then(change);
  const settled = run.catch(() => undefined);
  changing.set(dir, settled);
  void settled.then(() => {
    if (changing.get(dir) === settled) changing.delete(dir);
  });
  return run;
}

/**
 * The stored attributes of a partition: the chip's own for partition 0; for partition n > 0
 * the cartridge-wide ones (one chip, one barcode) and the host attributes written for it.
 */
export async function readMam(dir: string, partition = 0): Promise<MamAttributes> {
  // After the changes asked for before this read.
  await changing.get(dir);
  return readStoredMam(dir, partition);
}

async function readStoredMam(dir: string, partition: number): Promise<MamAttributes> {
  const file = await readMamFile(dir);
  const attrs = decode(file.attributes);
  if (partition === 0) return attrs;
  const own = decode(file.partitions?.[String(partition)]);
  for (const id of attrs.keys()) if (cartridgeWide(id) && !own.has(id)) own.set(id, attrs.get(id)!);
  return own;
}

export function writeMam(dir: string, attrs: MamAttributes): Promise<void> {
  return oneAtATime(dir, async () => {
    const file = await readMamFile(dir);
    await writeMamFile(dir, { ...file, format: 1, attributes: encode(attrs) });
  });
}

/** Sets (or, with null, deletes) some attributes of a partition and keeps the rest. */
export function updateMam(
  dir: string,
  changes: Map<number, Buffer | null>,
  partition = 0,
): Promise<MamAttributes> {
  return oneAtATime(dir, async () => {
    const file = await readMamFile(dir);
    const key = String(partition);
    const attrs = decode(partition === 0 ? file.attributes : file.partitions?.[key]);
    for (const [id, value] of changes) {
      if (value === null) attrs.delete(id);
      else attrs.set(id, Buffer.from(value));
    }
    if (partition === 0) file.attributes = encode(attrs);
    else file.partitions = { ...file.partitions, [key]: encode(attrs) };
    await writeMamFile(dir, file);
    return readStoredMam(dir, partition);
  });
}

/** Forgets the host attributes of partitions a format removed (numbers `count` and up). */
export function dropPartitionMam(dir: string, count: number): Promise<void> {
  return oneAtATime(dir, async () => {
    const file = await readMamFile(dir);
    if (!file.partitions) return;
    const kept = Object.fromEntries(Object.entries(file.partitions).filter(([n]) => Number(n) < count));
    file.partitions = Object.keys(kept).length > 0 ? kept : undefined;
    await writeMamFile(dir, file);
  });
}
