import type { Logger } from 'pino';
import { Asc, PeripheralType } from '../scsi/constants.js';
import { ScsiDeviceBase } from '../scsi/device-base.js';
import type { DeviceIdentity } from '../scsi/inquiry.js';
import type { DeviceEvent, ScsiCommand, ScsiResult } from '../scsi/types.js';
import type { LibraryInventory } from '../inventory/library-inventory.js';
import { naaFromSerial } from '../ssc/drive-identity.js';
import { TapeAlerts } from '../ssc/tape-alert.js';
import type { TapeDrive } from '../ssc/tape-drive.js';
import { ElementMap } from './element-map.js';
import { installSmcCommands } from './smc-commands.js';

export interface MediaChangerOptions {
  /** Wire product id: `3573-TL` or `03584L32`. */
  product: string;
  serial: string;
  vendor?: string;
  inventory: LibraryInventory;
  /** The library's drives in index (element address) order. */
  drives: readonly TapeDrive[];
  logger?: Logger;
}

/** Library firmware levels reported as INQUIRY revision. */
const REVISIONS: Record<string, string> = { '3573-TL': 'F.11', '03584L32': 'C260' };

function changerIdentity(o: MediaChangerOptions): DeviceIdentity {
  // Byte 55 bit 0 (BarC): a barcode reader is fitted, so hosts ask for volume tags.
  const vendorSpecific = Buffer.alloc(20);
  vendorSpecific[19] = 0x01;
  return {
    vendor: o.vendor ?? 'IBM',
    product: o.product,
    revision: REVISIONS[o.product] ?? '0100',
    serial: o.serial,
    naa: naaFromSerial('library', o.serial),
    removable: true,
    version: 0x05,
    vendorSpecific,
  };
}

/**
 * An IBM library's medium changer LUN (SMC-3). The inventory is the library: MOVE MEDIUM goes
 * through `inventory.move(..., 'host')` like the API's load and unload. A change the host did
 * not make itself (API load, I/E import, another host) reaches it as NOT READY TO READY
 * CHANGE, the unit attention after which hosts re-read element status.
 */
export class MediaChanger extends ScsiDeviceBase {
  readonly elements: ElementMap;
  readonly inventory: LibraryInventory;
  readonly drives: readonly TapeDrive[];
  /** Nexuses that locked the I/E station (PREVENT MEDIUM REMOVAL); kept, not enforced on the API. */
  readonly preventing = new Set<string>();
  /** Library TapeAlert flags (log page 2Eh). */
  readonly alerts = new TapeAlerts();
  private seen: string;

  constructor(options: MediaChangerOptions) {
    super(PeripheralType.MEDIUM_CHANGER, changerIdentity(options), { logger: options.logger });
    this.inventory = options.inventory;
    this.drives = options.drives;
    const g = options.inventory.geometry;
    this.elements = new ElementMap(options.product, {
      numSlots: g.numSlots,
      numIe: g.numIe,
      numDrives: g.numDrives,
    });
    this.seen = this.inventorySignature();
    installSmcCommands(this);
  }

  override execute(cmd: ScsiCommand): Promise<ScsiResult> {
    this.noticeInventoryChange();
    return super.execute(cmd);
  }

  /** After this nexus's own MOVE MEDIUM: everyone else hears about it, the mover does not. */
  movedBy(nexus: string): void {
    this.seen = this.inventorySignature();
    this.raiseUnitAttention(Asc.NOT_READY_TO_READY_CHANGE, { except: nexus });
  }

  override notify(event: DeviceEvent): void {
    if (event.kind === 'lun-reset') this.preventing.clear();
    if (event.kind === 'nexus-loss') this.preventing.delete(event.nexus);
    super.notify(event);
  }

  /** Compares the inventory with what hosts last saw; any difference is a unit attention. */
  private noticeInventoryChange(): void {
    const now = this.inventorySignature();
    if (now === this.seen) return;
    this.seen = now;
    this.raiseUnitAttention(Asc.NOT_READY_TO_READY_CHANGE);
  }

  private inventorySignature(): string {
    return this.inventory
      .cartridges()
      .map((c) => `${c.label}@${c.at.kind}${c.at.num}`)
      .join(',');
  }
}
