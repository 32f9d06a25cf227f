import { requireZeroBits, truncateToAllocation } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import {
  counterValue,
  fromParameterPointer,
  logPage,
  logParameter,
  parseLogSense,
} from '../scsi/log-parameters.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { earlyWarningAt } from '../media/layout.js';
import type { TapeDrive } from './tape-drive.js';
import { MAM, readMam } from '../media/mam.js';
import { PERFORMANCE_PAGE, performancePage } from './performance-log-page.js';
import { UsageAttribute } from './medium-usage.js';
import { mediaErrorToScsi } from './tape-sense.js';
import {
  VOLUME_STATISTICS_PAGE,
  volumeStatisticsPage,
  type VolumeFigures,
} from './volume-statistics-page.js';

/** Log pages of the drive: SSC-4 8.2 plus IBM's tape capacity page. */
export const TapeLogPage = {
  SUPPORTED_PAGES: 0x00,
  WRITE_ERROR_COUNTERS: 0x02,
  READ_ERROR_COUNTERS: 0x03,
  SEQUENTIAL_ACCESS: 0x0c,
  /** Volume statistics (volume-statistics-page.ts): LTFS's cartridge health and capacities. */
  VOLUME_STATISTICS: VOLUME_STATISTICS_PAGE,
  TAPE_ALERT: 0x2e,
  /** IBM LTO: remaining and maximum capacity per partition, in MB. */
  TAPE_CAPACITY: 0x31,
  /** IBM LTO: performance characteristics (performance-log-page.ts). */
  PERFORMANCE: PERFORMANCE_PAGE,
} as const;

const SUPPORTED = [
  TapeLogPage.SUPPORTED_PAGES,
  TapeLogPage.WRITE_ERROR_COUNTERS,
  TapeLogPage.READ_ERROR_COUNTERS,
  TapeLogPage.SEQUENTIAL_ACCESS,
  TapeLogPage.VOLUME_STATISTICS,
  TapeLogPage.TAPE_ALERT,
  TapeLogPage.TAPE_CAPACITY,
  TapeLogPage.PERFORMANCE,
];

const MB = 1_000_000;
/** MAM usage attributes count megabytes of 1,048,576 bytes. */
const MIB = 1_048_576;

/** Capacity figures of the threaded cartridge in bytes (zeros without one). */
function capacity(drive: TapeDrive): { used: number; total: number } {
  const m = drive.medium;
  if (m.state !== 'mounted') return { used: 0, total: 0 };
  return { used: m.tape.sizeBytes, total: m.tape.capacityBytes };
}

function sequentialAccessPage(drive: TapeDrive): Buffer {
  const { used, total } = capacity(drive);
  const ew = total > 0 ? earlyWarningAt(total) : 0;
  const { written, read } = drive.ioBytes;
  return logPage(TapeLogPage.SEQUENTIAL_ACCESS, [
    logParameter(0x0000, counterValue(written, 8)),
    // Nothing is compressed on the way to the image, so host bytes and media bytes are equal.
    logParameter(0x0001, counterValue(written, 8)),
    logParameter(0x0002, counterValue(read, 8)),
    logParameter(0x0003, counterValue(read, 8)),
    logParameter(0x0004, counterValue(Math.floor(used / MB))),
    logParameter(0x0005, counterValue(Math.floor(ew / MB))),
    logParameter(0x0006, counterValue(Math.floor((total - ew) / MB))),
    logParameter(0x0008, counterValue(0)),
    logParameter(0x0100, counterValue(0, 1)),
  ]);
}

/**
 * Write or read error counters (SPC-4 7.3.24/7.3.17). An image has no correctable errors, so
 * parameters 0-4 stay zero; 5 counts the bytes moved and 6 the errors the host was told of
 * (a write that did not reach the pool, a block that failed its checksum).
 */
function errorCountersPage(page: number, bytes: number, uncorrected: number): Buffer {
  return logPage(page, [
    ...[0, 1, 2, 3, 4].map((code) => logParameter(code, counterValue(0))),
    logParameter(0x0005, counterValue(bytes, 8)),
    logParameter(0x0006, counterValue(uncorrected)),
  ]);
}

/** Each partition's capacity and use in bytes (none without a cartridge). */
function partitions(drive: TapeDrive): { used: number; total: number }[] {
  const m = drive.medium;
  if (m.state !== 'mounted') return [];
  return Array.from({ length: m.tape.partitionCount }, (_, p) => ({
    used: m.tape.partitionUsed(p),
    total: m.tape.partitionCapacity(p),
  }));
}

/** IBM's tape capacity page: remaining (1, 2) and maximum (3, 4) MB of partitions 0 and 1. */
function tapeCapacityPage(drive: TapeDrive): Buffer {
  const parts = partitions(drive);
  const remaining = (p: number) =>
    Math.floor(Math.max(0, (parts[p]?.total ?? 0) - (parts[p]?.used ?? 0)) / MB);
  const maximum = (p: number) => Math.floor((parts[p]?.total ?? 0) / MB);
  return logPage(TapeLogPage.TAPE_CAPACITY, [
    logParameter(0x0001, counterValue(remaining(0))),
    logParameter(0x0002, counterValue(remaining(1))),
    logParameter(0x0003, counterValue(maximum(0))),
    logParameter(0x0004, counterValue(maximum(1))),
  ]);
}

/** The threaded cartridge's figures for page 17h: the drive's counters and its MAM usage. */
async function volumeFigures(drive: TapeDrive): Promise<VolumeFigures | undefined> {
  const m = drive.medium;
  if (m.state !== 'mounted') return undefined;
  const mam = await readMam(m.dir).catch((err: unknown) => mediaErrorToScsi(err));
  const count = (id: number) => Number(mam.get(id)?.readBigUInt64BE(0) ?? 0n);
  const ascii = (id: number, width: number) => mam.get(id) ?? Buffer.alloc(width, 0x20);
  const { written, read } = drive.loadBytes;
  return {
    loads: count(UsageAttribute.LOAD_COUNT),
    lifetime: {
      written: count(UsageAttribute.MB_WRITTEN_IN_LIFE) * MIB + written,
      read: count(UsageAttribute.MB_READ_IN_LIFE) * MIB + read,
    },
    thisLoad: { written, read },
    unrecovered: { ...drive.uncorrectedErrors },
    partitions: partitions(drive),
    writeProtected: m.tape.writeProtected,
    worm: m.tape.worm,
    serial: ascii(MAM.MEDIUM_SERIAL_NUMBER, 32),
    barcode: ascii(MAM.BARCODE, 32),
    manufacturer: ascii(MAM.MEDIUM_MANUFACTURER, 8),
  };
}

/** LOG SENSE of the drive. Reading TapeAlert clears its flags, as SSC-4 Annex A describes. */
export async function tapeLogSense(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const req = parseLogSense(ctx.cdb, { subpages: true });
  // Only the performance page has subpages.
  if (req.subpage !== 0 && req.page !== TapeLogPage.PERFORMANCE)
    throw new ScsiError(Sense.invalidFieldInCdb(3, 7));
  let data: Buffer;
  switch (req.page) {
    case TapeLogPage.SUPPORTED_PAGES: {
      data = Buffer.concat([Buffer.from([0, 0, 0, SUPPORTED.length]), Buffer.from(SUPPORTED)]);
      break;
    }
    case TapeLogPage.WRITE_ERROR_COUNTERS:
      data = errorCountersPage(req.page, drive.ioBytes.written, drive.uncorrectedErrors.write);
      break;
    case TapeLogPage.READ_ERROR_COUNTERS:
      data = errorCountersPage(req.page, drive.ioBytes.read, drive.uncorrectedErrors.read);
      break;
    case TapeLogPage.SEQUENTIAL_ACCESS:
      data = sequentialAccessPage(drive);
      break;
    case TapeLogPage.TAPE_ALERT:
      data = drive.alerts.takeLogPage();
      break;
    case TapeLogPage.TAPE_CAPACITY:
      data = tapeCapacityPage(drive);
      break;
    case TapeLogPage.VOLUME_STATISTICS:
      data = volumeStatisticsPage(await volumeFigures(drive));
      break;
    case TapeLogPage.PERFORMANCE:
      data = performancePage(req.subpage);
      break;
    default:
      throw new ScsiError(Sense.invalidFieldInCdb(2, 5));
  }
  if (req.page !== TapeLogPage.SUPPORTED_PAGES) data = fromParameterPointer(data, req.parameterPointer);
  return good(truncateToAllocation(data, req.allocation));
}

/** LOG SELECT: PCR resets the counters and flags; parameter values cannot be set. */
export function tapeLogSelect(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfc);
  if ((cdb[1]! & 0x01) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  if (cdb.readUInt16BE(7) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(7));
  if ((cdb[1]! & 0x02) !== 0) {
    drive.resetCounters();
    drive.alerts.clear();
  }
  return good();
}
