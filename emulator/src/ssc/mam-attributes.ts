import { requireZeroBits, truncateToAllocation } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { cartridgeDir } from '../media/layout.js';
import { binaryField, readMam, type MamAttributes } from '../media/mam.js';
import { withCurrentLoad } from './medium-usage.js';
import type { TapeDrive } from './tape-drive.js';
import { TapeSense, mediaErrorToScsi } from './tape-sense.js';
import { VOLUME_CHANGE_REFERENCE } from './volume-change-reference.js';

const MIB = 1_048_576;
const BINARY = 0;
const ASCII = 1;
const TEXT = 2;

/** Formats and lengths SPC-4 7.4.2 fixes for the standard attributes. */
const KNOWN: Record<number, { format: number; length: number }> = {
  0x0000: { format: BINARY, length: 8 },
  0x0001: { format: BINARY, length: 8 },
  0x0002: { format: BINARY, length: 8 },
  0x0003: { format: BINARY, length: 8 },
  0x0005: { format: ASCII, length: 8 },
  0x0006: { format: BINARY, length: 1 },
  0x0009: { format: BINARY, length: 4 },
  0x020a: { format: ASCII, length: 40 },
  0x020b: { format: ASCII, length: 40 },
  0x020c: { format: ASCII, length: 40 },
  0x020d: { format: ASCII, length: 40 },
  0x0220: { format: BINARY, length: 8 },
  0x0221: { format: BINARY, length: 8 },
  0x0222: { format: BINARY, length: 8 },
  0x0223: { format: BINARY, length: 8 },
  0x0400: { format: ASCII, length: 8 },
  0x0401: { format: ASCII, length: 32 },
  0x0402: { format: BINARY, length: 4 },
  0x0403: { format: BINARY, length: 4 },
  0x0404: { format: ASCII, length: 8 },
  0x0405: { format: BINARY, length: 1 },
  0x0406: { format: ASCII, length: 8 },
  0x0407: { format: BINARY, length: 8 },
  0x0408: { format: BINARY, length: 1 },
  0x0409: { format: BINARY, length: 2 },
  0x0800: { format: ASCII, length: 8 },
  0x0801: { format: ASCII, length: 32 },
  0x0802: { format: ASCII, length: 8 },
  0x0803: { format: TEXT, length: 160 },
  0x0804: { format: ASCII, length: 12 },
  0x0805: { format: BINARY, length: 1 },
  0x0806: { format: ASCII, length: 32 },
  0x0807: { format: TEXT, length: 80 },
  0x0808: { format: TEXT, length: 160 },
  0x0809: { format: ASCII, length: 16 },
};

/** Host attributes (standard and vendor) are writable; device and medium ones are not. */
function writable(id: number): boolean {
  return (id >= 0x0800 && id <= 0x0bff) || (id >= 0x1400 && id <= 0x17ff);
}

function formatOf(id: number): number {
  return KNOWN[id]?.format ?? BINARY;
}

const ServiceAction = { VALUES: 0, LIST: 1, VOLUME_LIST: 2, PARTITION_LIST: 3, SUPPORTED: 5 } as const;

/**
 * MAM as the drive reports it for one partition: the chip's stored values (the partition's own
 * host attributes) plus the device attributes it computes, among them that partition's
 * remaining and maximum capacity.
 */
async function attributesOf(drive: TapeDrive, partition = 0): Promise<MamAttributes> {
  const m = drive.medium;
  if (m.state === 'empty') throw new ScsiError(Sense.mediumNotPresent());
  if (m.state === 'loading') throw new ScsiError(Sense.notReady([0x04, 0x01]));
  const count = m.state === 'mounted' ? m.tape.partitionCount : 1;
  if (partition >= count) throw new ScsiError(Sense.invalidFieldInCdb(7));
  const stored = await readMam(cartridgeDir(drive.options.mediaDir, m.label), partition).catch(
    (err: unknown) => mediaErrorToScsi(err),
  );
  const attrs: MamAttributes = new Map(stored);
  if (m.state === 'mounted') {
    // SPC-4 counts partition capacities in MiB (1,048,576 bytes).
    const total = m.tape.partitionCapacity(partition);
    attrs.set(0x0000, binaryField((total - m.tape.partitionUsed(partition)) / MIB));
    attrs.set(0x0001, binaryField(total / MIB));
    attrs.set(0x0006, Buffer.from([m.format.density]));
    if (m.changes) attrs.set(VOLUME_CHANGE_REFERENCE, m.changes.read());
    if (m.cartridge) withCurrentLoad(attrs, drive.loadBytes);
  }
  attrs.set(0x0002, drive.alerts.asBitmap());
  attrs.set(0x0005, Buffer.from('LTO-CVE ', 'ascii'));
  const density = stored.get(0x0405)?.[0];
  if (density !== undefined && !attrs.has(0x0006)) attrs.set(0x0006, Buffer.from([density]));
  return attrs;
}

function encodeAttribute(id: number, value: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt16BE(id, 0);
  head[2] = (writable(id) ? 0 : 0x80) | formatOf(id);
  head.writeUInt16BE(value.length, 3);
  return Buffer.concat([head, value]);
}

function withLength(body: Buffer, width: 2 | 4): Buffer {
  const head = Buffer.alloc(width);
  head.writeUIntBE(body.length, 0, width);
  return Buffer.concat([head, body]);
}

function idList(ids: number[]): Buffer {
  const out = Buffer.alloc(2 * ids.length);
  ids.forEach((id, i) => out.writeUInt16BE(id, 2 * i));
  return withLength(out, 4);
}

/** One volume (0); the partition (byte 7) is checked against the cartridge's partitions. */
function checkVolume(cdb: Buffer): number {
  if (cdb[5] !== 0) throw new ScsiError(Sense.invalidFieldInCdb(5));
  return cdb[7]!;
}

/** READ ATTRIBUTE (SPC-4 6.17) from the cartridge memory; works on stubs, whose chip is kept. */
export async function readAttribute(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  const action = cdb[1]! & 0x1f;
  const partition = checkVolume(cdb);
  const first = cdb.readUInt16BE(8);
  const allocation = cdb.readUInt32BE(10);
  let data: Buffer;
  switch (action) {
    case ServiceAction.VALUES:
    case ServiceAction.LIST: {
      const attrs = await attributesOf(drive, partition);
      // Values from an attribute the chip does not hold: INVALID FIELD IN CDB, as IBM drives
      // answer (LTFS reads its optional attributes, such as the volume lock, that way).
      if (action === ServiceAction.VALUES && first !== 0 && !attrs.has(first)) {
        throw new ScsiError(Sense.invalidFieldInCdb(8));
      }
      const ids = [...attrs.keys()].filter((id) => id >= first).sort((a, b) => a - b);
      data =
        action === ServiceAction.LIST
          ? idList(ids)
          : withLength(Buffer.concat(ids.map((id) => encodeAttribute(id, attrs.get(id)!))), 4);
      break;
    }
    case ServiceAction.VOLUME_LIST:
      // One volume, numbered 0.
      data = withLength(Buffer.from([0, 1]), 2);
      break;
    case ServiceAction.PARTITION_LIST: {
      // First partition number and how many there are.
      const m = drive.medium;
      data = withLength(Buffer.from([0, m.state === 'mounted' ? m.tape.partitionCount : 1]), 2);
      break;
    }
    case ServiceAction.SUPPORTED: {
      await attributesOf(drive);
      const ids = Object.keys(KNOWN)
        .map(Number)
        .filter((id) => id >= first);
      data = idList(ids);
      break;
    }
    default:
      throw new ScsiError(Sense.invalidFieldInCdb(1, 4));
  }
  return good(truncateToAllocation(data, allocation));
}

/** Data-out length of WRITE ATTRIBUTE. */
export function writeAttributeDataOutLength(cdb: Buffer): number {
  return cdb.readUInt32BE(10);
}

/** WRITE ATTRIBUTE: host attributes only; a zero-length value deletes one (SPC-4 6.38). */
export async function writeAttribute(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfe);
  const partition = checkVolume(cdb);
  const list = (ctx.cmd.dataOut ?? Buffer.alloc(0)).subarray(0, cdb.readUInt32BE(10));
  const m = drive.requireMounted();
  if (!m.cartridge) throw new ScsiError(TapeSense.stubMedium());
  if (partition >= m.tape.partitionCount) throw new ScsiError(Sense.invalidFieldInCdb(7));
  if (list.length < 4) throw new ScsiError(Sense.parameterListLengthError());
  // LTFS counts the 4-byte header in PARAMETER DATA LENGTH; IBM drives take the attributes
  // that are there, and so does this one.
  const end = Math.min(list.length, 4 + list.readUInt32BE(0));
  const changes = new Map<number, Buffer | null>();
  for (let at = 4; at < end;) {
    if (at + 5 > end) throw new ScsiError(Sense.parameterListLengthError());
    const id = list.readUInt16BE(at);
    const format = list[at + 2]! & 0x03;
    const length = list.readUInt16BE(at + 3);
    if (at + 5 + length > end) throw new ScsiError(Sense.parameterListLengthError());
    if (!writable(id)) throw new ScsiError(Sense.invalidFieldInParameterList(at));
    const known = KNOWN[id];
    if (known && format !== known.format) throw new ScsiError(Sense.invalidFieldInParameterList(at + 2, 1));
    if (known && length !== 0 && length > known.length) {
      throw new ScsiError(Sense.invalidFieldInParameterList(at + 3));
    }
    changes.set(id, length === 0 ? null : Buffer.from(list.subarray(at + 5, at + 5 + length)));
    at += 5 + length;
  }
  await m.cartridge.writeMam(changes, partition).catch((err: unknown) => mediaErrorToScsi(err));
  return good();
}
