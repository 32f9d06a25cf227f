import type { DriveActivity, Slot } from '@vtl/api';
import { badRequest } from '@vtl/api/base';
import type { EventSink } from '../events.js';
import { SerialQueue } from '../util/serial-queue.js';
import {
  DEFAULT_UNLOAD_GUARD_MS,
  lastActiveIso,
  newDriveRuntime,
  removalRefusal,
  type DriveRuntime,
} from './drive-state.js';
import {
  describeElement,
  driveElement,
  formatLocation,
  slotNumber,
  storageSlot,
  type ElementRef,
} from './elements.js';
import {
  cloneInventory,
  loadInventory,
  saveInventory,
  type InventoryState,
  type LibraryGeometry,
} from './inventory-file.js';

/**
 * How the drive model learns about media. The SSC drive opens the image in `mediaLoaded` and
 * syncs and closes it in `mediaUnloading`, which may also refuse the move by throwing a
 * VtlError (e.g. PREVENT MEDIUM REMOVAL is in force). `mediaLoaded` must not throw: the
 * cartridge is already in the drive and a bad image is the host's MEDIUM ERROR to see.
 */
export interface DriveMediaHooks {
  mediaLoaded?(drive: number, label: string): Promise<void>;
  mediaUnloading?(drive: number, label: string): Promise<void>;
}

/** `api`: an operator through the control API. `host`: the changer's MOVE MEDIUM. */
export type MoveOrigin = 'api' | 'host';

export interface MoveResult {
  label: string;
  from: ElementRef;
  to: ElementRef;
  /** `slot 3 -> drive 0`, as the event carries it. */
  detail: string;
}

export interface InventoryOptions {
  events: EventSink;
  /** Epoch ms; injectable so the unload quiet window can be tested without waiting. */
  now?: () => number;
  unloadGuardMs?: number;
  hooks?: DriveMediaHooks;
}

/** A drive as the status view shows it, less the identity fields the config holds. */
export interface DriveView {
  index: number;
  loaded: string;
  source_slot: number;
  activity: DriveActivity;
  blocks_written: number;
  blocks_read: number;
  /** Bytes hosts wrote (Data-Out) and read (Data-In) through the drive over iSCSI. */
  iscsi_bytes_written: number;
  iscsi_bytes_read: number;
  last_active: string;
}

/**
 * Where every cartridge of one library is, persisted in `<media_dir>/inventory.json` on every
 * change before the change is visible, so a restart (or kill -9) keeps each cartridge in place.
 * `move` is the one primitive; load, unload, the changer's MOVE MEDIUM all go through it.
 */
export class LibraryInventory {
  private readonly queue = new SerialQueue();
  private readonly runtime: DriveRuntime[];
  private readonly now: () => number;
  private readonly guardMs: number;
  private hooks: DriveMediaHooks;
  /** Cartridges an offsite job holds (label → holder): no move into a drive until released. */
  private readonly holds = new Map<string, string>();
  /** Bumped on every committed change of where cartridges are (see `revision`). */
  private commits = 0;

  private constructor(
    readonly geometry: LibraryGeometry,
    private state: InventoryState,
    private readonly events: EventSink,
    opts: InventoryOptions,
  ) {
    this.runtime = state.drives.map(() => newDriveRuntime());
    this.now = opts.now ?? Date.now;
    this.guardMs = opts.unloadGuardMs ?? DEFAULT_UNLOAD_GUARD_MS;
    this.hooks = opts.hooks ?? {};
  }

  /** Loads (or starts) the library's inventory; `notes` says what a geometry change moved. */
  static async open(
    geometry: LibraryGeometry,
    opts: InventoryOptions,
  ): Promise<{ inventory: LibraryInventory; notes: string[] }> {
    const { state, notes } = await loadInventory(geometry);
    if (notes.length > 0) await saveInventory(geometry, state);
    return { inventory: new LibraryInventory(geometry, state, opts.events, opts), notes };
  }

  get id(): number {
    return this.geometry.id;
  }

  /**
   * Changes whenever slots(), cartridges() or the drives' loaded media change (every commit),
   * so a reader can keep what it built from them until then (DataPlane.status).
   */
  get revision(): number {
    return this.commits;
  }

  /** Installs the drive model's hooks (the transport starts after the inventory opens). */
  setHooks(hooks: DriveMediaHooks): void {
    this.hooks = hooks;
  }

  slots(): Slot[] {
    return [
      ...this.state.storage.map((label, i) => ({ kind: 'storage' as const, num: i + 1, label })),
      ...this.state.ie.map((label, i) => ({ kind: 'ie' as const, num: i + 1, label })),
    ];
  }

  drives(): DriveView[] {
    return this.state.drives.map((d, index) => {
      const rt = this.runtime[index]!;
      return {
        index,
        loaded: d.label,
        source_slot: d.label ? slotNumber(d.source) : 0,
        activity: rt.activity,
        blocks_written: rt.blocksWritten,
        blocks_read: rt.blocksRead,
        iscsi_bytes_written: rt.iscsiBytesWritten,
        iscsi_bytes_read: rt.iscsiBytesRead,
        last_active: lastActiveIso(rt),
      };
    });
  }

  /** Every cartridge with its element, in slot, I/E, drive order. */
  cartridges(): { label: string; at: ElementRef }[] {
    const out: { label: string; at: ElementRef }[] = [];
    this.state.storage.forEach((label, i) => label && out.push({ label, at: storageSlot(i + 1) }));
    this.state.ie.forEach((label, i) => label && out.push({ label, at: { kind: 'ie', num: i + 1 } }));
    this.state.drives.forEach((d, i) => d.label && out.push({ label: d.label, at: driveElement(i) }));
    return out;
  }

  whereIs(label: string): ElementRef | undefined {
    return this.cartridges().find((c) => c.label === label)?.at;
  }

  labelAt(ref: ElementRef): string {
    return this.cell(ref) ?? '';
  }

  /** The first empty storage slot that is not the home of a loaded cartridge. */
  firstEmptyStorage(): number | undefined {
    const i = this.state.storage.findIndex((label, n) => label === '' && !this.isHomeOfLoaded(n + 1));
    return i >= 0 ? i + 1 : undefined;
  }

  /** Puts a newly minted cartridge in a storage slot. Idempotent for the same label and slot. */
  place(label: string, slot: number): Promise<void> {
    return this.queue.run(async () => {
      const at = this.whereIs(label);
      const target = storageSlot(slot);
      if (at && at.kind === 'storage' && at.num === slot) return;
      if (at) throw badRequest(`${label} is already in library ${this.id} at ${formatLocation(at)}`);
      this.assertExists(target);
      const held = this.labelAt(target);
      if (held) throw badRequest(`slot ${slot} of library ${this.id} holds ${held}; choose an empty slot`);
      if (this.isHomeOfLoaded(slot))
        throw badRequest(
          `slot ${slot} of library ${this.id} is the home of a loaded cartridge; choose another`,
        );
      const next = cloneInventory(this.state);
      next.storage[slot - 1] = label;
      await this.commit(next);
    });
  }

  /**
   * Places many newly minted cartridges with one inventory write (a 400-slot mint would
   * otherwise rewrite and sync the file 400 times). Each item is checked as place() checks
   * it; the refused ones come back with their reason and the rest are placed.
   */
  placeMany(items: readonly { label: string; slot: number }[]): Promise<Map<string, Error>> {
    return this.queue.run(async () => {
      const refused = new Map<string, Error>();
      const next = cloneInventory(this.state);
      const where = new Map(this.cartridges().map((c) => [c.label, c.at]));
      for (const { label, slot } of items) {
        const at = where.get(label);
        if (at && at.kind === 'storage' && at.num === slot) continue;
        try {
          if (at) throw badRequest(`${label} is already in library ${this.id} at ${formatLocation(at)}`);
          const target = storageSlot(slot);
          this.assertExists(target);
          const held = next.storage[slot - 1];
          if (held)
            throw badRequest(`slot ${slot} of library ${this.id} holds ${held}; choose an empty slot`);
          if (this.isHomeOfLoaded(slot))
            throw badRequest(`slot ${slot} of library ${this.id} is the home of a loaded cartridge`);
          next.storage[slot - 1] = label;
          where.set(label, target);
        } catch (err) {
          refused.set(label, err as Error);
        }
      }
      if (refused.size < items.length) await this.commit(next);
      return refused;
    });
  }

  /** The element a drive's cartridge was loaded from (the SCSI source element); none when empty. */
  sourceOf(drive: number): ElementRef | undefined {
    const d = this.state.drives[drive];
    return d?.label ? d.source : undefined;
  }

  /** A storage slot a loaded cartridge returns to on unload: never given to another one. */
  isHomeOfLoaded(slot: number): boolean {
    return this.state.drives.some((d) => d.label && d.source?.kind === 'storage' && d.source.num === slot);
  }

  /**
   * Keeps a cartridge out of every drive while a job reads or replaces its image. Refused while
   * it is in a drive; idempotent for the same holder. Held in memory: the job re-holds after a restart.
   */
  hold(label: string, holder: string): Promise<void> {
    return this.queue.run(async () => {
      const at = this.whereIs(label);
      if (!at) throw badRequest(`${label} is not in library ${this.id}`);
      if (at.kind === 'drive')
        throw badRequest(`${label} is loaded in drive ${at.num}; it must be unloaded first`);
      const other = this.holds.get(label);
      if (other && other !== holder) throw badRequest(`${label} is held by ${other}`);
      this.holds.set(label, holder);
    });
  }

  /** Ends a hold; a no-op when none is held. */
  release(label: string): Promise<void> {
    return this.queue.run(async () => {
      this.holds.delete(label);
    });
  }

  /**
   * Puts an imported cartridge into the first empty import/export slot, where the host finds it
   * as if an operator had inserted it. Idempotent: a label already in the library stays where it is.
   */
  placeInIe(label: string): Promise<number> {
    return this.queue.run(async () => {
      const at = this.whereIs(label);
      if (at) return at.kind === 'ie' ? at.num : 0;
      const free = this.state.ie.indexOf('');
      if (free < 0)
        throw badRequest(`library ${this.id} has no empty import/export slot; remove a cartridge from one`);
      const next = cloneInventory(this.state);
      next.ie[free] = label;
      await this.commit(next);
      return free + 1;
    });
  }

  /** Forgets a cartridge (its image is the caller's). Refused while it is in a drive. */
  remove(label: string): Promise<boolean> {
    return this.queue.run(async () => {
      const at = this.whereIs(label);
      if (!at) return false;
      if (at.kind === 'drive') throw badRequest(`${label} is loaded in drive ${at.num}; unload it first`);
      const next = cloneInventory(this.state);
      if (at.kind === 'storage') next.storage[at.num - 1] = '';
      else next.ie[at.num - 1] = '';
      await this.commit(next);
      return true;
    });
  }

  /** Moves a cartridge between any two elements; the destination must be empty. */
  move(from: ElementRef, to: ElementRef, origin: MoveOrigin): Promise<MoveResult> {
    return this.queue.run(() => this.moveNow(from, to, origin));
  }

  /** Operator load: from the label's storage or I/E slot into an empty drive. */
  load(drive: number, label: string): Promise<MoveResult> {
    return this.queue.run(async () => {
      this.assertExists(driveElement(drive));
      const held = this.labelAt(driveElement(drive));
      if (held) throw badRequest(`drive ${drive} holds ${held}; unload it first`);
      const at = this.whereIs(label);
      if (!at) throw badRequest(`${label} is not in library ${this.id}`);
      if (at.kind === 'drive') throw badRequest(`${label} is already loaded in drive ${at.num}`);
      return this.moveNow(at, driveElement(drive), 'api');
    });
  }

  /**
   * Operator unload (§3.3, §4.6 rule 7): back to the storage slot it came from, or the first
   * empty storage slot; never into an import/export slot (a cartridge loaded from one goes to
   * storage). `force` (library delete) skips the busy check and the quiet window; the drive hook
   * still runs.
   */
  unload(drive: number, opts: { force?: boolean } = {}): Promise<MoveResult> {
    return this.queue.run(async () => {
      const from = driveElement(drive);
      this.assertExists(from);
      if (!this.labelAt(from)) throw badRequest(`drive ${drive} of library ${this.id} is empty`);
      const source = this.state.drives[drive]!.source;
      let to = source?.kind === 'storage' && !this.labelAt(source) ? source : undefined;
      if (!to) {
        const free = this.firstEmptyStorage();
        if (free === undefined)
          throw badRequest(`library ${this.id} has no empty storage slot; free one first`);
        to = storageSlot(free);
      }
      return this.moveNow(from, to, 'api', opts.force ?? false);
    });
  }

  /** The drive model reports what it is doing; transitions become drive_activity events. */
  setActivity(drive: number, activity: DriveActivity): void {
    const rt = this.runtime[drive];
    if (!rt) return;
    rt.lastActive = this.now();
    if (rt.activity === activity) return;
    rt.activity = activity;
    this.events.emit({
      kind: 'drive_activity',
      subject: `drive:${this.id}:${drive}`,
      detail: activity,
      data: { activity, library: this.id, drive },
    });
  }

  /** Counts blocks the host moved through a drive (the metrics' since-boot counters). */
  recordIo(drive: number, io: { written?: number; read?: number }): void {
    const rt = this.runtime[drive];
    if (!rt) return;
    rt.blocksWritten += io.written ?? 0;
    rt.blocksRead += io.read ?? 0;
    rt.lastActive = this.now();
  }

  /** Counts the bytes an iSCSI command moved through a drive (every command, data or not). */
  recordIscsiBytes(drive: number, bytes: { read: number; written: number }): void {
    const rt = this.runtime[drive];
    if (!rt) return;
    rt.iscsiBytesWritten += bytes.written;
    rt.iscsiBytesRead += bytes.read;
  }

  private async moveNow(
    from: ElementRef,
    to: ElementRef,
    origin: MoveOrigin,
    force = false,
  ): Promise<MoveResult> {
    this.assertExists(from);
    this.assertExists(to);
    const label = this.labelAt(from);
    if (!label) throw badRequest(`${describeElement(from)} of library ${this.id} is empty`);
    const held = this.labelAt(to);
    if (held)
      throw badRequest(`${describeElement(to)} of library ${this.id} holds ${held}; choose an empty one`);
    const holder = to.kind === 'drive' ? this.holds.get(label) : undefined;
    if (holder) throw badRequest(`${label} is held by ${holder} (offsite transfer); retry when it finished`);
    if (from.kind === 'drive') {
      const refusal = force
        ? undefined
        : removalRefusal(from.num, this.runtime[from.num]!, {
            now: this.now(),
            guardMs: this.guardMs,
            quietWindow: origin === 'api',
          });
      if (refusal) throw badRequest(refusal);
      await this.hooks.mediaUnloading?.(from.num, label);
    }
    const next = cloneInventory(this.state);
    const source = from.kind === 'drive' ? next.drives[from.num]!.source : from;
    this.setCell(next, from, '');
    this.setCell(next, to, label);
    if (to.kind === 'drive') next.drives[to.num]!.source = source;
    if (from.kind === 'drive') {
      next.drives[from.num]!.source = undefined;
      this.runtime[from.num]!.lastActive = this.now();
    }
    if (to.kind === 'drive') this.setActivity(to.num, 'mounting');
    try {
      await this.commit(next);
    } catch (err) {
      if (to.kind === 'drive') this.setActivity(to.num, 'idle');
      throw err;
    }
    const detail = `${describeElement(from)} -> ${describeElement(to)}`;
    const kind =
      origin === 'api' && to.kind === 'drive'
        ? 'manual_load'
        : origin === 'api' && from.kind === 'drive'
          ? 'manual_unload'
          : 'cart_moved';
    this.events.emit({
      kind,
      subject: label,
      detail,
      data: { library: this.id, from: formatLocation(from), to: formatLocation(to), origin },
    });
    if (to.kind === 'drive') {
      await this.notifyLoaded(to.num, label);
      this.setActivity(to.num, 'idle');
    }
    return { label, from, to, detail };
  }

  private async notifyLoaded(drive: number, label: string): Promise<void> {
    try {
      await this.hooks.mediaLoaded?.(drive, label);
    } catch (err) {
      this.events.emit({
        kind: 'emu_media_error',
        subject: label,
        detail: `drive ${drive} could not mount ${label}: ${(err as Error).message}`,
        data: { library: this.id, drive },
      });
    }
  }

  private async commit(next: InventoryState): Promise<void> {
    await saveInventory(this.geometry, next);
    this.state = next;
    this.commits++;
  }

  private cell(ref: ElementRef): string | undefined {
    if (ref.kind === 'storage') return this.state.storage[ref.num - 1];
    if (ref.kind === 'ie') return this.state.ie[ref.num - 1];
    return this.state.drives[ref.num]?.label;
  }

  private setCell(s: InventoryState, ref: ElementRef, label: string): void {
    if (ref.kind === 'storage') s.storage[ref.num - 1] = label;
    else if (ref.kind === 'ie') s.ie[ref.num - 1] = label;
    else s.drives[ref.num]!.label = label;
  }

  private assertExists(ref: ElementRef): void {
    const g = this.geometry;
    const ok =
      Number.isInteger(ref.num) &&
      (ref.kind === 'storage'
        ? ref.num >= 1 && ref.num <= g.numSlots
        : ref.kind === 'ie'
          ? ref.num >= 1 && ref.num <= g.numIe
          : ref.num >= 0 && ref.num < g.numDrives);
    if (!ok) throw badRequest(`library ${this.id} has no ${describeElement(ref)}`);
  }
}
