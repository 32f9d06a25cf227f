import {
  LOG_ASCII_LIST,
  LOG_BINARY_LIST,
  counterValue,
  logPage,
  logParameter,
} from '../scsi/log-parameters.js';

/** Log page 17h, volume statistics (SSC-4 8.2.5; IBM LTO SCSI Reference, Log Sense page 17h). */
export const VOLUME_STATISTICS_PAGE = 0x17;

/** Parameter codes of page 17h that the drive reports. */
export const VolumeStat = {
  PAGE_VALID: 0x0000,
  THREAD_COUNT: 0x0001,
  DATA_SETS_WRITTEN: 0x0002,
  WRITE_RETRIES: 0x0003,
  UNRECOVERED_WRITE_ERRORS: 0x0004,
  SUSPENDED_WRITES: 0x0005,
  FATAL_SUSPENDED_WRITES: 0x0006,
  DATA_SETS_READ: 0x0007,
  READ_RETRIES: 0x0008,
  UNRECOVERED_READ_ERRORS: 0x0009,
  SUSPENDED_READS: 0x000a,
  FATAL_SUSPENDED_READS: 0x000b,
  LAST_MOUNT_UNRECOVERED_WRITE_ERRORS: 0x000c,
  LAST_MOUNT_UNRECOVERED_READ_ERRORS: 0x000d,
  LAST_MOUNT_MB_WRITTEN: 0x000e,
  LAST_MOUNT_MB_READ: 0x000f,
  LIFETIME_MB_WRITTEN: 0x0010,
  LIFETIME_MB_READ: 0x0011,
  LAST_LOAD_WRITE_COMPRESSION: 0x0012,
  LAST_LOAD_READ_COMPRESSION: 0x0013,
  TOTAL_NATIVE_CAPACITY: 0x0016,
  TOTAL_USED_NATIVE_CAPACITY: 0x0017,
  VOLUME_SERIAL_NUMBER: 0x0040,
  VOLUME_BARCODE: 0x0042,
  VOLUME_MANUFACTURER: 0x0043,
  WRITE_PROTECT: 0x0080,
  WORM: 0x0081,
  BEGINNING_OF_MEDIUM_PASSES: 0x0101,
  MIDDLE_OF_TAPE_PASSES: 0x0102,
  PARTITION_NATIVE_CAPACITY: 0x0202,
  PARTITION_USED_CAPACITY: 0x0203,
  PARTITION_REMAINING_CAPACITY: 0x0204,
} as const;

/** What the page reports of the threaded cartridge; bytes unless said otherwise. */
export interface VolumeFigures {
  /** Loads of the cartridge over its life (MAM LOAD COUNT), this one included. */
  loads: number;
  lifetime: { written: number; read: number };
  thisLoad: { written: number; read: number };
  /** Errors the host was told of during this load. */
  unrecovered: { write: number; read: number };
  partitions: { used: number; total: number }[];
  writeProtected: boolean;
  worm: boolean;
  /** MAM MEDIUM SERIAL NUMBER, BARCODE and MEDIUM MANUFACTURER as stored (space padded). */
  serial: Buffer;
  barcode: Buffer;
  manufacturer: Buffer;
}

/** Capacities and byte counts of this page are in units of 10^6 bytes. */
const MB = 1_000_000;
/**
 * An image keeps no data sets; the data set counts are its bytes in units of this size, a round
 * figure of the few megabytes an LTO data set holds.
 */
const DATA_SET_BYTES = 4 * 1_048_576;
/** Compression ratio parameters are the ratio times 100; the image stores data as sent. */
const UNCOMPRESSED = 100;

const mb = (bytes: number) => Math.floor(bytes / MB);
const dataSets = (bytes: number) => Math.ceil(bytes / DATA_SET_BYTES);
const counter = (code: number, value: number, width: 1 | 2 | 4 | 8) =>
  logParameter(code, counterValue(value, width));

/** A per-partition list parameter: one 8-byte record (length 7, partition, MB) per partition. */
function partitionRecords(code: number, values: number[]): Buffer {
  const body = Buffer.concat(
    values.map((v, p) => {
      const r = Buffer.alloc(8);
      r[0] = 7;
      r.writeUInt16BE(p, 2);
      r.writeUInt32BE(Math.min(0xffffffff, mb(v)), 4);
      return r;
    }),
  );
  return logParameter(code, body, LOG_BINARY_LIST);
}

/**
 * Page 17h. Without a cartridge only PAGE VALID (0) is reported. With one, every counter the
 * LTFS reference implementation reads for its cartridge health (thread count, data sets and
 * errors of the volume and of the last mount, megabytes moved, medium passes) is there, each as a
 * 1, 2, 4 or 8-byte binary value as the reference lays it out, followed by the volume's identity,
 * its protection and the per-partition capacities LTFS reads on LTO-6 and later. An image has no
 * retries, suspended transfers or wear: those stay zero.
 */
export function volumeStatisticsPage(v: VolumeFigures | undefined): Buffer {
  if (!v) return logPage(VOLUME_STATISTICS_PAGE, [counter(VolumeStat.PAGE_VALID, 0, 1)]);
  const used = v.partitions.reduce((n, p) => n + p.used, 0);
  const total = v.partitions.reduce((n, p) => n + p.total, 0);
  return logPage(VOLUME_STATISTICS_PAGE, [
    counter(VolumeStat.PAGE_VALID, 1, 1),
    counter(VolumeStat.THREAD_COUNT, v.loads, 4),
    counter(VolumeStat.DATA_SETS_WRITTEN, dataSets(v.lifetime.written), 8),
    counter(VolumeStat.WRITE_RETRIES, 0, 4),
    counter(VolumeStat.UNRECOVERED_WRITE_ERRORS, v.unrecovered.write, 2),
    counter(VolumeStat.SUSPENDED_WRITES, 0, 2),
    counter(VolumeStat.FATAL_SUSPENDED_WRITES, 0, 2),
    counter(VolumeStat.DATA_SETS_READ, dataSets(v.lifetime.read), 8),
    counter(VolumeStat.READ_RETRIES, 0, 4),
    counter(VolumeStat.UNRECOVERED_READ_ERRORS, v.unrecovered.read, 2),
    counter(VolumeStat.SUSPENDED_READS, 0, 2),
    counter(VolumeStat.FATAL_SUSPENDED_READS, 0, 2),
    counter(VolumeStat.LAST_MOUNT_UNRECOVERED_WRITE_ERRORS, v.unrecovered.write, 2),
    counter(VolumeStat.LAST_MOUNT_UNRECOVERED_READ_ERRORS, v.unrecovered.read, 2),
    counter(VolumeStat.LAST_MOUNT_MB_WRITTEN, mb(v.thisLoad.written), 4),
    counter(VolumeStat.LAST_MOUNT_MB_READ, mb(v.thisLoad.read), 4),
    counter(VolumeStat.LIFETIME_MB_WRITTEN, mb(v.lifetime.written), 8),
    counter(VolumeStat.LIFETIME_MB_READ, mb(v.lifetime.read), 8),
    counter(VolumeStat.LAST_LOAD_WRITE_COMPRESSION, UNCOMPRESSED, 2),
    counter(VolumeStat.LAST_LOAD_READ_COMPRESSION, UNCOMPRESSED, 2),
    counter(VolumeStat.TOTAL_NATIVE_CAPACITY, mb(total), 4),
    counter(VolumeStat.TOTAL_USED_NATIVE_CAPACITY, mb(used), 4),
    logParameter(VolumeStat.VOLUME_SERIAL_NUMBER, v.serial, LOG_ASCII_LIST),
    logParameter(VolumeStat.VOLUME_BARCODE, v.barcode, LOG_ASCII_LIST),
    logParameter(VolumeStat.VOLUME_MANUFACTURER, v.manufacturer, LOG_ASCII_LIST),
    counter(VolumeStat.WRITE_PROTECT, v.writeProtected ? 1 : 0, 1),
    counter(VolumeStat.WORM, v.worm ? 1 : 0, 1),
    // Every thread passes the beginning of medium; the image keeps no other passes.
    counter(VolumeStat.BEGINNING_OF_MEDIUM_PASSES, v.loads, 4),
    counter(VolumeStat.MIDDLE_OF_TAPE_PASSES, 0, 4),
    partitionRecords(
      VolumeStat.PARTITION_NATIVE_CAPACITY,
      v.partitions.map((p) => p.total),
    ),
    partitionRecords(
      VolumeStat.PARTITION_USED_CAPACITY,
      v.partitions.map((p) => p.used),
    ),
    partitionRecords(
      VolumeStat.PARTITION_REMAINING_CAPACITY,
      v.partitions.map((p) => Math.max(0, p.total - p.used)),
    ),
  ]);
}
