import { createHash } from 'node:crypto';
import { asciiField } from '../media/mam.js';
import type { DeviceIdentity } from '../scsi/inquiry.js';
import type { DrivePersonality } from './lto-personality.js';

/** IBM's IEEE company id: NAA names of IBM devices start 5005076. */
const IBM_OUI = '005076';

/**
 * An NAA-5 name (IEEE registered) derived from a serial: stable across restarts and unique per
 * serial, so hosts and backup software that key on the WWN see the same device every time.
 */
export function naaFromSerial(kind: string, serial: string): string {
  const digest = createHash('sha256').update(`${kind}:${serial}`).digest('hex');
  return `5${IBM_OUI}${digest.slice(0, 9)}`;
}

/**
 * The identifier a drive reports as its T10 vendor ID designator in VPD page 83h and the
 * library reports for the drive's element with DVCID: vendor (8), product (16), serial. Backup
 * software pairs changer elements with drive paths by comparing these bytes.
 */
export function driveDeviceIdentifier(product: string, serial: string, vendor = 'IBM'): Buffer {
  return Buffer.concat([asciiField(vendor, 8), asciiField(product, 16), Buffer.from(serial, 'ascii')]);
}

/** SPC/SSC version descriptors: SAM-4, SPC-4, SSC-3, iSCSI. */
const DRIVE_VERSION_DESCRIPTORS = [0x0080, 0x0460, 0x0400, 0x0960];

/** INQUIRY identity of an IBM ULT3580 drive with this serial. */
export function driveIdentity(p: DrivePersonality, serial: string): DeviceIdentity {
  // Bytes 36-55: IBM puts the drive's form factor and interface here; the Linux lin_tape and
  // IBM tools read it, everyone else ignores it.
  const vendorSpecific = Buffer.alloc(20);
  vendorSpecific[0] = p.halfHeight ? 0x01 : 0x00;
  return {
    vendor: p.vendor,
    product: p.product,
    revision: p.revision,
    serial,
    naa: naaFromSerial('drive', serial),
    removable: true,
    version: 0x06,
    commandQueuing: false,
    versionDescriptors: DRIVE_VERSION_DESCRIPTORS,
    vendorSpecific,
  };
}
