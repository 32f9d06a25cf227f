import type { DriveActivity } from '@vtl/api';
import { badRequest } from '@vtl/api/base';
import type { Logger } from 'pino';
import { Asc, PeripheralType } from '../scsi/constants.js';
import { ScsiDeviceBase } from '../scsi/device-base.js';
import { Sense, ScsiError, type SenseSpec } from '../scsi/sense.js';
import type { DeviceEvent } from '../scsi/types.js';
import { PartitionedTape } from '../media/partitioned-tape.js';
import { isMediaError } from '../media/errors.js';
import { cartridgeDir, readMeta } from '../media/layout.js';
import { driveDeviceIdentifier, driveIdentity } from './drive-identity.js';
import {
  drivePersonality,
  ltoFormat,
  mediumAccess,
  type DrivePersonality,
  type LtoFormat,
} from './lto-personality.js';
import { SscOpcode, installSscCommands } from './ssc-commands.js';
import { DEFAULT_EXTRA_MODE } from './extra-mode-pages.js';
import { DEFAULT_TAPE_MODE, type TapeModeState } from './tape-mode-state.js';
import { recordLoad, recordUnload } from './medium-usage.js';
import { WriteBuffer } from './write-buffer.js';
import { DriveEncryption } from './encryption-state.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { StubTape, type TapeIo } from './stub-tape.js';
import { TapeAlertFlag, TapeAlerts } from './tape-alert.js';
import { TapeSense, mediaErrorToScsi } from './tape-sense.js';
import { VolumeChangeReference } from './volume-change-reference.js';

/** Where a drive reports what it is doing: the library inventory's drive runtime. */
export interface DriveActivitySink {
  setActivity(drive: number, activity: DriveActivity): void;
  recordIo(drive: number, io: { written?: number; read?: number }): void;
}

export interface TapeDriveOptions {
  library: number;
  /** 0-based drive index in the library (element order). */
  index: number;
  serial: string;
  /** Wire product id, e.g. `ULT3580-TD8`. */
  product: string;
  /** LTO generation of the library's drives, used when the product id does not say. */
  generation: number;
  mediaDir: string;
  activity: DriveActivitySink;
  logger?: Logger;
  /** How long after the last READ/WRITE the drive reports itself idle again (default 1 s). */
  idleAfterMs?: number;
}

/** A cartridge threaded and usable: data image, or an evicted stub that reads blank. */
export interface MountedTape {
  label: string;
  dir: string;
  tape: TapeIo;
  /** The real image when not a stub; MAM writes, formats and write protection go through it. */
  cartridge?: PartitionedTape;
  access: 'read-write' | 'read-only';
  format: LtoFormat;
  /** The volume change reference of a real cartridge (stubs keep their stored one). */
  changes?: VolumeChangeReference;
}

export type DriveMedium =
  | { state: 'empty' }
  | { state: 'loading'; label: string }
  | ({ state: 'mounted' } & MountedTape)
  /** UNLOADed by the host: still in the drive, waiting for the changer (or a LOAD). */
  | { state: 'ejected'; label: string }
  /** In the drive but unusable (too new/old generation, unreadable image). */
  | { state: 'unusable'; label: string; sense: SenseSpec };

/**
 * An IBM ULT3580 LTO drive (SSC-4). The SPC basics come from the device base; the SSC rows are
 * installed from ssc-commands.ts and work on the state kept here: the threaded cartridge, mode
 * parameters, PREVENT MEDIUM REMOVAL holders and TapeAlert flags.
 */
export class TapeDrive extends ScsiDeviceBase {
  readonly personality: DrivePersonality;
  readonly alerts = new TapeAlerts();
  readonly mode: TapeModeState = { ...DEFAULT_TAPE_MODE, extra: { ...DEFAULT_EXTRA_MODE } };
  /** Blocks acknowledged to the host and still on their way to the cartridge image. */
  readonly writeBuffer = new WriteBuffer();
  /** Nexuses that sent PREVENT MEDIUM REMOVAL; removal is refused while any holds it. */
  readonly preventing = new Set<string>();
  medium: DriveMedium = { state: 'empty' };
  /** Bytes moved for the cartridge in the drive (log page 0Ch); reset per load and by LOG SELECT. */
  readonly ioBytes = { written: 0, read: 0 };
  /** Errors the host was told of (log pages 02h/03h), counted like ioBytes. */
  readonly uncorrectedErrors = { write: 0, read: 0 };
  /** Bytes moved since the cartridge was loaded, for its MAM usage attributes (not reset by LOG SELECT). */
  readonly loadBytes = { written: 0, read: 0 };
  /** Data encryption parameters and keys (SECURITY PROTOCOL OUT), in memory only. */
  private readonly encryption = new DriveEncryption();
  /** A load-time error reported once, on the next command that needs the medium (stubs). */
  private pendingMediumError: SenseSpec | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(readonly options: TapeDriveOptions) {
    const personality = drivePersonality(options.product, options.generation);
    super(PeripheralType.SEQUENTIAL_ACCESS, driveIdentity(personality, options.serial), {
      logger: options.logger,
    });
    this.personality = personality;
    installSscCommands(this);
  }

  get index(): number {
    return this.options.index;
  }

  /** The bytes the changer reports for this drive with DVCID (same as VPD 83h's T10 id). */
  get deviceIdentifier(): Buffer {
    return driveDeviceIdentifier(this.identity.product, this.identity.serial, this.identity.vendor);
  }

  get removalPrevented(): boolean {
    return this.preventing.size > 0;
  }

  /**
   * Inventory hook: a cartridge arrived in the drive. Never throws: a bad cartridge is the
   * host's MEDIUM ERROR to see. `initial` (process start) skips the unit attention, since
   * every nexus starts with a power-on one anyway.
   */
  async mediaLoaded(label: string, opts: { initial?: boolean } = {}): Promise<void> {
    this.medium = { state: 'loading', label };
    this.alerts.clear();
    this.resetCounters();
    this.loadBytes.written = this.loadBytes.read = 0;
    this.pendingMediumError = undefined;
    this.reportLostWrites(this.writeBuffer.takeFailure());
    try {
      this.medium = await this.thread(label);
    } catch (err) {
      this.logger?.warn({ err, label, drive: this.index }, 'cartridge could not be threaded');
      this.alerts.raise(TapeAlertFlag.MEDIA);
      this.medium = { state: 'unusable', label, sense: TapeSense.stubMedium() };
    }
    if (!opts.initial) this.raiseUnitAttention(Asc.NOT_READY_TO_READY_CHANGE);
  }

  /** Inventory hook: the cartridge is about to leave; refused while a host prevents removal. */
  async mediaUnloading(label: string): Promise<void> {
    if (this.removalPrevented) {
      this.alerts.raise(TapeAlertFlag.NO_REMOVAL);
      throw badRequest(
        `drive ${this.index} of library ${this.options.library}: a host has prevented removal of ${label} (PREVENT MEDIUM REMOVAL)`,
      );
    }
    await this.eject();
    this.encryption.demounted();
    this.medium = { state: 'empty' };
    this.pendingMediumError = undefined;
    this.alerts.clear();
    this.idleNow();
  }

  /** LOAD/UNLOAD with LOAD=0: sync, rewind and present the cartridge to the changer. */
  async eject(): Promise<void> {
    const m = this.medium;
    if (m.state !== 'mounted' && m.state !== 'unusable') return;
    await this.writeBuffer.drain();
    if (m.state === 'mounted') await this.closeTape(m);
    this.encryption.demounted();
    this.medium = { state: 'ejected', label: m.label };
  }

  /** LOAD/UNLOAD with LOAD=1 on an ejected cartridge: thread it again at BOP. */
  async reload(): Promise<void> {
    const m = this.medium;
    if (m.state !== 'ejected') return;
    await this.mediaLoaded(m.label, { initial: true });
  }

  /** Syncs and closes the image; the transport calls this when the emulator stops. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await this.writeBuffer.drain();
    this.reportLostWrites(this.writeBuffer.takeFailure());
    const m = this.medium;
    if (m.state === 'mounted') await this.closeTape(m);
  }

  /** Closes the image, then adds this load's bytes to the cartridge's usage in its MAM. */
  private async closeTape(m: MountedTape): Promise<void> {
    await m.tape.close();
    if (!m.cartridge) return;
    await recordUnload(m.dir, this.loadBytes).catch((err: unknown) =>
      this.logger?.warn(
        { err, label: m.label },
        'could not record the usage of this load in the cartridge MAM',
      ),
    );
  }

  /**
   * The threaded medium, or the sense a host gets instead: NOT READY without a cartridge,
   * MEDIUM ERROR for one this drive cannot use, and a stub's load error once.
   */
  requireMounted(): MountedTape {
    const m = this.medium;
    if (m.state === 'empty' || m.state === 'ejected') throw new ScsiError(Sense.mediumNotPresent());
    if (m.state === 'loading') throw new ScsiError(Sense.notReady(Asc.LUN_NOT_READY_BECOMING_READY));
    if (m.state === 'unusable') throw new ScsiError(m.sense);
    const pending = this.pendingMediumError;
    if (pending) {
      this.pendingMediumError = undefined;
      throw new ScsiError(pending);
    }
    return m;
  }

  /** As requireMounted, and the drive may write this cartridge. */
  requireWritable(): MountedTape {
    const m = this.requireMounted();
    if (m.access === 'read-only') {
      this.alerts.raise(TapeAlertFlag.READ_ONLY_FORMAT);
      throw new ScsiError(TapeSense.readOnlyFormat());
    }
    if (m.tape.writeProtected) {
      this.alerts.raise(TapeAlertFlag.WRITE_PROTECT);
      throw new ScsiError(TapeSense.writeProtected());
    }
    m.changes?.changing();
    return m;
  }

  override testUnitReady(): void {
    this.requireMounted();
  }

  /**
   * Every command but WRITE sees the tape as written: it waits for the write buffer to empty.
   * A block that failed on its way ends the next command with a deferred error.
   */
  protected override async beforeCommand(ctx: CommandContext): Promise<void> {
    // A failure is told once, with every block it cost: the blocks behind it fail too.
    if (ctx.cdb[0] !== SscOpcode.WRITE_6 || this.writeBuffer.failed) await this.writeBuffer.drain();
    const owed = this.writeBuffer.takeFailure();
    if (!owed) return;
    this.reportLostWrites(owed);
    throw new ScsiError(TapeSense.deferredWriteError(owed.blocks));
  }

  /** A new cartridge, or LOG SELECT with PCR: the byte and error counters start again. */
  resetCounters(): void {
    this.ioBytes.written = this.ioBytes.read = 0;
    this.uncorrectedErrors.write = this.uncorrectedErrors.read = 0;
  }

  private reportLostWrites(owed: { error: unknown; blocks: number } | undefined): void {
    if (!owed) return;
    this.uncorrectedErrors.write += 1;
    this.alerts.raise(TapeAlertFlag.WRITE_FAILURE);
    this.logger?.error(
      { err: owed.error, blocks: owed.blocks, drive: this.index, library: this.options.library },
      'blocks acknowledged from the drive buffer did not reach the cartridge image; check the pool disk',
    );
  }

  /** Ends a READ that failed; a block that fails its checksum also sets the READ FAILURE flag. */
  readFailed(err: unknown): never {
    if (isMediaError(err, 'corrupt')) {
      this.uncorrectedErrors.read += 1;
      this.alerts.raise(TapeAlertFlag.READ_FAILURE);
      this.logger?.error(
        { err, drive: this.index, library: this.options.library },
        'a block read back from the cartridge image fails its checksum (damaged on the pool disk); check the disk',
      );
    }
    mediaErrorToScsi(err);
  }

  /**
   * Ends a WRITE or WRITE FILEMARKS that failed: an image refusal as its sense, and a failure
   * of the pool itself (full, a disk error) as MEDIUM ERROR / WRITE ERROR with the residue, the
   * WRITE FAILURE TapeAlert flag and a log line saying where to look.
   */
  writeFailed(err: unknown, residue: number): never {
    if (err instanceof ScsiError || isMediaError(err)) mediaErrorToScsi(err, residue);
    this.uncorrectedErrors.write += 1;
    this.alerts.raise(TapeAlertFlag.WRITE_FAILURE);
    this.logger?.error(
      { err, drive: this.index, library: this.options.library },
      'a write did not reach the cartridge image; check the pool disk (full, or failing)',
    );
    throw new ScsiError(TapeSense.writeError(residue));
  }

  /** FORMAT MEDIUM or SET CAPACITY laid a cartridge out anew: its old content is gone. */
  noteFormatted(label: string, partitions: number[]): void {
    this.logger?.info(
      { label, drive: this.index, library: this.options.library, partitions },
      'the host formatted the cartridge (FORMAT MEDIUM / SET CAPACITY); its previous content is gone',
    );
  }

  /** Counts blocks and reports reading/writing; the drive reads as idle once I/O pauses. */
  noteIo(kind: 'reading' | 'writing', blocks: number, bytes: number): void {
    const { activity, index } = this.options;
    activity.setActivity(index, kind);
    activity.recordIo(index, kind === 'writing' ? { written: blocks } : { read: blocks });
    if (kind === 'writing') {
      this.ioBytes.written += bytes;
      this.loadBytes.written += bytes;
    } else {
      this.ioBytes.read += bytes;
      this.loadBytes.read += bytes;
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => activity.setActivity(index, 'idle'), this.options.idleAfterMs ?? 1000);
    this.idleTimer.unref();
  }

  /** Rewind and unload end a host's use of the tape; a MOVE MEDIUM may follow at once. */
  idleNow(): void {
    clearTimeout(this.idleTimer);
    this.options.activity.setActivity(this.options.index, 'idle');
  }

  /**
   * The encryption parameters as `nexus` sees them, after dropping the sets whose owner lost
   * its reservation (CKORL) or registration (CKORP) since the last look.
   */
  encryptionFor(_nexus: string): DriveEncryption {
    this.encryption.reservationsChanged((n) => this.holdsReservation(n));
    return this.encryption;
  }

  /** Logs that a host changed encryption: modes and scope only, never the key or its label. */
  noteEncryptionSet(fields: { scope: string; encrypt: boolean | string; decrypt: string }): void {
    this.logger?.info(
      { ...fields, drive: this.index, library: this.options.library },
      'a host set the data encryption parameters (the key stays in the drive memory only)',
    );
  }

  /** Whether a nexus holds a reservation (RESERVE or persistent) and is a registrant. */
  holdsReservation(nexus: string): { reserved: boolean; registered: boolean } {
    const pr = this.persistentReservations;
    return {
      reserved: this.reservation.heldBy === nexus || pr.isHolder(nexus),
      registered: pr.registrations().has(nexus),
    };
  }

  override notify(event: DeviceEvent): void {
    if (event.kind === 'lun-reset') {
      this.preventing.clear();
      this.encryption.reset();
    }
    if (event.kind === 'nexus-loss') {
      this.preventing.delete(event.nexus);
      this.encryption.nexusLost(event.nexus);
    }
    super.notify(event);
  }

  private async thread(label: string): Promise<DriveMedium> {
    const dir = cartridgeDir(this.options.mediaDir, label);
    const meta = await readMeta(dir);
    const format = ltoFormat(meta.generation);
    const access = mediumAccess(this.personality.gen, meta.generation);
    if (!format || access === 'none') {
      this.alerts.raise(TapeAlertFlag.UNSUPPORTED_FORMAT);
      return { state: 'unusable', label, sense: TapeSense.incompatibleMedium() };
    }
    if (access === 'read-only') this.alerts.raise(TapeAlertFlag.READ_ONLY_FORMAT);
    if (meta.stub) {
      this.alerts.raise(TapeAlertFlag.MEDIA);
      this.pendingMediumError = TapeSense.stubMedium();
      return {
        state: 'mounted',
        label,
        dir,
        access,
        format,
        tape: new StubTape(label, meta.capacity_bytes, meta.worm === true),
      };
    }
    const cartridge = await PartitionedTape.open(dir);
    await recordLoad(dir, this.identity).catch((err: unknown) =>
      this.logger?.warn({ err, label }, 'could not record the load in the cartridge MAM'),
    );
    const changes = await VolumeChangeReference.load(dir, cartridge, this.logger);
    return { state: 'mounted', label, dir, access, format, tape: cartridge, cartridge, changes };
  }
}
