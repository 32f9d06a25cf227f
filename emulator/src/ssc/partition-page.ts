import { Sense, ScsiError } from '../scsi/sense.js';

/**
 * The medium partition mode page (11h) as the IBM LTO SCSI Reference describes it, and the
 * partitioning a host asks for through it. LTO-5 and LTO-6 make up to two partitions, LTO-7
 * and later up to four; LTO-3 and LTO-4 one. Partitioning is on format (POFM): MODE SELECT
 * only records the request, FORMAT MEDIUM lays the tape out.
 */

const FDP = 0x80;
const SDP = 0x40;
const IDP = 0x20;
const PSUM_SHIFT = 3;
const POFM = 0x04;
/** Medium format recognition: format and partition recognition. */
const FORMAT_RECOGNITION = 0x03;
/** A partition size of FFFFh: the rest of the tape. */
const REMAINDER = 0xffff;

/** How a host asked the tape to be partitioned (MODE SELECT page 11h), applied by FORMAT MEDIUM. */
export interface PartitionRequest {
  /** Partitions after the first. */
  additional: number;
  mode: 'default' | 'select' | 'initiator';
  /** Partition sizes in bytes, partition 0 first; `undefined` is FFFFh (the remainder). */
  sizes: (number | undefined)[];
}

/** The one-partition layout (FORMAT MEDIUM with the default format, or nothing selected). */
export const ONE_PARTITION: PartitionRequest = { additional: 0, mode: 'default', sizes: [] };

export function maxAdditionalPartitions(gen: number): number {
  if (gen < 5) return 0;
  return gen < 7 ? 1 : 3;
}

/** Page length of this drive's page 11h: the header fields and one size per possible partition. */
function pageLength(gen: number): number {
  return 6 + 2 * (maxAdditionalPartitions(gen) + 1);
}

/** Smallest partition: 1% of the tape (a real drive rounds a partition up to a few wraps). */
export function minimumPartition(capacity: number): number {
  return Math.ceil(capacity / 100 / 1_000_000) * 1_000_000;
}

/** Units exponent so that every size fits the 16-bit fields, as precise as that allows. */
function unitsFor(sizes: number[]): number {
  for (let u = 6; u < 15; u++) if (sizes.every((s) => Math.floor(s / 10 ** u) < REMAINDER)) return u;
  return 15;
}

/** Page 11h: the tape's partitions as they are (current), or what MODE SELECT may change. */
export function partitionPage(gen: number, capacities: number[], changeable: boolean): Buffer {
  const p = Buffer.alloc(2 + pageLength(gen));
  p[0] = 0x11;
  p[1] = pageLength(gen);
  const max = maxAdditionalPartitions(gen);
  if (changeable) {
    if (max === 0) return p;
    p[3] = 0xff;
    p[4] = FDP | SDP | IDP | (0x03 << PSUM_SHIFT);
    p[6] = 0x0f;
    for (let i = 0; i <= max; i++) p.writeUInt16BE(0xffff, 8 + 2 * i);
    return p;
  }
  p[2] = max;
  p[3] = Math.max(0, capacities.length - 1);
  p[4] = (capacities.length > 1 ? IDP : 0) | (0x03 << PSUM_SHIFT) | (max > 0 ? POFM : 0);
  p[5] = FORMAT_RECOGNITION;
  const units = unitsFor(capacities);
  p[6] = units;
  capacities.slice(0, max + 1).forEach((c, i) => p.writeUInt16BE(Math.floor(c / 10 ** units), 8 + 2 * i));
  return p;
}

/**
 * Reads a MODE SELECT page 11h (`page` includes its 2-byte header; `offset` is where it starts
 * in the parameter list, for field pointers). Refuses what the drive cannot do: more partitions
 * than it makes, more than one of FDP/SDP/IDP, more than one "remainder" size.
 */
export function parsePartitionPage(gen: number, page: Buffer, offset: number): PartitionRequest {
  if (page.length < 8) throw new ScsiError(Sense.invalidFieldInParameterList(offset + 1));
  const additional = page[3]!;
  if (additional > maxAdditionalPartitions(gen)) {
    throw new ScsiError(Sense.invalidFieldInParameterList(offset + 3));
  }
  const flags = page[4]!;
  const modes = [FDP, SDP, IDP].filter((f) => (flags & f) !== 0);
  if (modes.length > 1) throw new ScsiError(Sense.invalidFieldInParameterList(offset + 4, 7));
  if (modes[0] === FDP || additional === 0) return { ...ONE_PARTITION };
  if (modes[0] === SDP) return { additional, mode: 'select', sizes: [] };
  const psum = (flags >> PSUM_SHIFT) & 0x03;
  const exponent = [0, 3, 6, page[6]! & 0x0f][psum]!;
  const sizes: (number | undefined)[] = [];
  for (let i = 0; i <= additional; i++) {
    const at = 8 + 2 * i;
    if (at + 2 > page.length) throw new ScsiError(Sense.invalidFieldInParameterList(offset + 1));
    const raw = page.readUInt16BE(at);
    sizes.push(raw === REMAINDER ? undefined : raw * 10 ** exponent);
  }
  if (sizes.filter((s) => s === undefined).length > 1) {
    throw new ScsiError(Sense.invalidFieldInParameterList(offset + 8));
  }
  return { additional, mode: 'initiator', sizes };
}

/**
 * Partition capacities in bytes for a request on a tape of `capacity` bytes, or the index of
 * the size field that does not fit. Sizes round up to the minimum partition; the remainder
 * partition (or, with none, the last) takes what the others leave.
 */
export function layOut(req: PartitionRequest, capacity: number): number[] | { badSize: number } {
  const count = req.additional + 1;
  if (count === 1) return [capacity];
  const min = minimumPartition(capacity);
  if (req.mode === 'select') {
    const each = Math.floor(capacity / count / 1_000_000) * 1_000_000;
    return [...Array.from({ length: count - 1 }, () => each), capacity - each * (count - 1)];
  }
  const fixed = req.sizes.map((s) => (s === undefined ? undefined : Math.max(min, Math.ceil(s / 1e6) * 1e6)));
  const rest = fixed.indexOf(undefined);
  const used = fixed.reduce<number>((sum, s) => sum + (s ?? 0), 0);
  if (rest >= 0) {
    if (used + min > capacity) return { badSize: fixed.findIndex((s) => s !== undefined) };
    return fixed.map((s) => s ?? capacity - used);
  }
  if (used > capacity) return { badSize: count - 1 };
  return fixed as number[];
}
