import { PeripheralType, SenseKey } from '../scsi/constants.js';
import { readUInt64BE } from '../scsi/cdb.js';
import { ScsiDeviceBase, type DeviceOptions } from '../scsi/device-base.js';
import type { CommandContext } from '../scsi/dispatch.js';
import type { DeviceIdentity } from '../scsi/inquiry.js';
import { good } from '../scsi/result.js';
import { ScsiError, Sense } from '../scsi/sense.js';

const LBA_OUT_OF_RANGE = [0x21, 0x00] as const;

/**
 * A RAM-backed disk LUN. Not part of the library model: it exercises the transports' data paths
 * with real initiators (iscsi-test-cu and the Linux sd driver need a disk) and gives benchmarks a
 * device with no media logic in the way.
 */
export class RamDisk extends ScsiDeviceBase {
  readonly storage: Buffer;

  constructor(
    readonly blockSize: number,
    readonly blocks: number,
    identity: Partial<DeviceIdentity> = {},
    options: DeviceOptions = {},
  ) {
    super(
      PeripheralType.DIRECT_ACCESS,
      { vendor: 'VTL', product: 'RAMDISK', revision: '0001', serial: 'RAM0001', ...identity },
      options,
    );
    this.storage = Buffer.alloc(blockSize * blocks);
    const len10 = (cdb: Buffer) => cdb.readUInt16BE(7) * blockSize;
    const len16 = (cdb: Buffer) => cdb.readUInt32BE(10) * blockSize;
    this.table
      .set(0x25, { name: 'READ CAPACITY(10)', handler: () => good(this.capacity10()), readOnly: true })
      .set(0x28, {
        name: 'READ(10)',
        handler: (c) => this.read(c.cdb.readUInt32BE(2), c.cdb.readUInt16BE(7)),
        readOnly: true,
      })
      .set(0x2a, {
        name: 'WRITE(10)',
        dataOutLength: len10,
        handler: (c) => this.write(c, c.cdb.readUInt32BE(2), c.cdb.readUInt16BE(7)),
      })
      .set(0x35, { name: 'SYNCHRONIZE CACHE(10)', handler: () => good() })
      .set(0x88, {
        name: 'READ(16)',
        handler: (c) => this.read(readUInt64BE(c.cdb, 2), c.cdb.readUInt32BE(10)),
        readOnly: true,
      })
      .set(0x8a, {
        name: 'WRITE(16)',
        dataOutLength: len16,
        handler: (c) => this.write(c, readUInt64BE(c.cdb, 2), c.cdb.readUInt32BE(10)),
      })
      .setServiceAction(0x9e, 0x10, {
        name: 'READ CAPACITY(16)',
        handler: () => good(this.capacity16()),
        readOnly: true,
      });
  }

  private check(lba: number, count: number): void {
    if (lba + count > this.blocks) throw new ScsiError(Sense.of(SenseKey.ILLEGAL_REQUEST, LBA_OUT_OF_RANGE));
  }

  private read(lba: number, count: number) {
    this.check(lba, count);
    const start = lba * this.blockSize;
    // A copy: the transport may still be sending it when a later WRITE lands on the same blocks.
    return good(Buffer.from(this.storage.subarray(start, start + count * this.blockSize)));
  }

  private write(ctx: CommandContext, lba: number, count: number) {
    this.check(lba, count);
    // With a short iSCSI transfer (EDTL below the CDB's length) only what arrived is written, as
    // LIO does and iscsi-test-cu expects; the transport reports the overflow residual.
    const data = ctx.cmd.dataOut ?? Buffer.alloc(0);
    data.copy(this.storage, lba * this.blockSize, 0, Math.min(data.length, count * this.blockSize));
    return good();
  }

  private capacity10(): Buffer {
    const out = Buffer.alloc(8);
    out.writeUInt32BE(Math.min(this.blocks - 1, 0xffffffff), 0);
    out.writeUInt32BE(this.blockSize, 4);
    return out;
  }

  private capacity16(): Buffer {
    const out = Buffer.alloc(32);
    out.writeBigUInt64BE(BigInt(this.blocks - 1), 0);
    out.writeUInt32BE(this.blockSize, 8);
    return out;
  }
}
