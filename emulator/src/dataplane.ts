import { randomUUID } from 'node:crypto';
import { isoNow, notFound } from '@vtl/api/base';
import type { Logger } from 'pino';
import { EventBus } from './events.js';
import type {
  EmuEvent,
  EmuLibrary,
  EmulatorConfig,
  EmulatorLibraryConfig,
  HelloResult,
  InitiatorAccess,
} from './control/protocol.js';
import { formatLocation } from './inventory/elements.js';
import { LibraryInventory } from './inventory/library-inventory.js';
import { isMediaError } from './media/errors.js';
import { cartridgeStats, listImages, sweepMediaDir } from './media/image.js';
import { cartridgeDir } from './media/layout.js';

/** One served library: its configuration and where its cartridges are. */
export interface LibraryRuntime {
  config: EmulatorLibraryConfig;
  inventory: LibraryInventory;
}

/**
 * The SCSI transport (iSCSI target now, FC later) as the data plane sees it. `stop` must
 * sync and close every cartridge image its drives hold; `changerName` names the changer
 * device the way hosts see it (the status view's `changer`).
 */
export interface TransportHandle {
  portal: string;
  changerName?(library: number): string;
  /** How hosts address a drive (the status view's `sg`). */
  driveName?(library: number, drive: number): string;
  /** Logged-in host sessions now. */
  sessions?(): number;
  /** Initiator names with a logged-in host session now. */
  logins?(): string[];
  /** Replaces who may log in and which libraries each sees; returns the sessions it dropped. */
  setAccess?(initiators: InitiatorAccess[]): number;
  stop(): Promise<void>;
}

/**
 * Starts the transport over an opened data plane: the hook where the iSCSI target plugs in.
 * It installs drive hooks with `inventory.setHooks`, moves media with `inventory.move(...,
 * 'host')` and reports drive activity with `setActivity` and `recordIo`.
 */
export type TransportStarter = (dataPlane: DataPlane) => Promise<TransportHandle>;

export interface DataPlaneOptions {
  now?: () => number;
  unloadGuardMs?: number;
}

/** Everything the emulator serves: the libraries, their inventories and one event bus. */
type CartridgeFigures = Awaited<ReturnType<typeof cartridgeStats>>;

/** Images read at once by status() when their figures are not kept. */
const STATS_PARALLEL = 16;
/** Cartridge directories remembered by label; far above any appliance's cartridge count. */
const MAX_KEPT_DIRS = 100_000;

/** fn over items, at most `limit` at a time, results in item order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export class DataPlane {
  readonly bus = new EventBus();
  readonly libraries = new Map<number, LibraryRuntime>();
  readonly startedAt = isoNow();
  transport: TransportHandle | undefined;

  private constructor(
    readonly config: EmulatorConfig,
    readonly logger: Logger,
  ) {}

  /** Opens every library's inventory; leftovers of interrupted mints and deletes are swept. */
  static async open(config: EmulatorConfig, logger: Logger, opts: DataPlaneOptions = {}): Promise<DataPlane> {
    const dp = new DataPlane(config, logger);
    dp.bus.subscribe((event) => dp.forgetStatsOfDriveMoves(event));
    for (const lib of config.libraries) {
      const log = logger.child({ library: lib.id });
      const swept = await sweepMediaDir(lib.media_dir);
      if (swept.length > 0) log.warn({ swept }, 'removed leftovers of interrupted mints or deletes');
      const { inventory, notes } = await LibraryInventory.open(
        {
          id: lib.id,
          numSlots: lib.num_slots,
          numIe: lib.num_ie,
          numDrives: lib.drive_serials.length,
          mediaDir: lib.media_dir,
        },
        { events: dp.bus, now: opts.now, unloadGuardMs: opts.unloadGuardMs },
      );
      for (const note of notes) log.warn({ note }, 'inventory adjusted to the configured geometry');
      const known = new Set(inventory.cartridges().map((c) => c.label));
      const orphans = (await listImages(lib.media_dir)).filter((l) => !known.has(l));
      if (orphans.length > 0) log.warn({ orphans }, 'cartridge images on the pool that no slot holds');
      dp.libraries.set(lib.id, { config: lib, inventory });
    }
    return dp;
  }

  library(id: number): LibraryRuntime {
    const lib = this.libraries.get(id);
    if (!lib) throw notFound(`library ${id} is not served by this emulator; apply the library first`);
    return lib;
  }

  hello(): HelloResult {
    return {
      pid: process.pid,
      generation: this.config.generation,
      started_at: this.startedAt,
      iscsi_portal: this.transport?.portal ?? '',
    };
  }

  /**
   * Image figures of cartridges outside the drives, by image directory. Only a drive writes
   * an image in place, so a slot's figures hold until the cartridge is loaded or a library op
   * replaces the image (forgetStats); without this every status() would read thousands of
   * images (6,400 cartridges: ~50,000 system calls a second for the node status alone).
   */
  private readonly stats = new Map<string, CartridgeFigures>();

  /** Drops the kept figures of one image (its content changed outside a drive). */
  forgetStats(dir: string): void {
    this.stats.delete(dir);
    this.statsEpoch++;
  }

  /**
   * A cartridge that leaves a drive was written there, whether or not a status pass saw it
   * in the drive (a load, a few writes and an unload fit between two passes): its kept
   * figures go.
   */
  private forgetStatsOfDriveMoves(event: EmuEvent): void {
    const data = event.data as { library?: unknown; from?: unknown } | undefined;
    if (typeof data?.from !== 'string' || !data.from.startsWith('drive:')) return;
    const lib = typeof data.library === 'number' ? this.libraries.get(data.library) : undefined;
    if (lib) this.forgetStats(this.dirOf(lib.config, event.subject));
  }

  /** Bumped by forgetStats: a library's kept status part no longer holds. */
  private statsEpoch = 0;
  /**
   * Each library's last status part and what it was built from. An idle library's part is
   * the same object on every call, so an idle emulator answers the nodeagent's once-a-second
   * status without building 6,400 cartridge entries (16 full libraries) each time.
   */
  private readonly parts = new WeakMap<LibraryRuntime, { key: string; part: EmuLibrary }>();
  /** This process's tags are its own: another emulator's tag never matches one of them. */
  private readonly statusId = randomUUID();
  private statusGeneration = 0;
  private lastParts: EmuLibrary[] = [];

  /** A cartridge's directory, joined once per label rather than once per status pass. */
  private dirOf(config: EmulatorLibraryConfig, label: string): string {
    const key = `${config.media_dir}\0${label}`;
    let dir = this.dirs.get(key);
    if (dir === undefined) {
      dir = cartridgeDir(config.media_dir, label);
      if (this.dirs.size >= MAX_KEPT_DIRS) this.dirs.clear();
      this.dirs.set(key, dir);
    }
    return dir;
  }

  private readonly dirs = new Map<string, string>();

  async status(): Promise<EmuLibrary[]> {
    return (await this.statusTagged()).libraries;
  }

  /** Every library's status, and a tag that changes whenever any of it does. */
  async statusTagged(): Promise<{ libraries: EmuLibrary[]; tag: string }> {
    const out: EmuLibrary[] = [];
    for (const runtime of this.libraries.values()) out.push(await this.libraryStatus(runtime));
    if (out.length !== this.lastParts.length || out.some((part, i) => part !== this.lastParts[i])) {
      this.statusGeneration++;
      this.lastParts = out;
    }
    return { libraries: out, tag: `${this.statusId}:${this.statusGeneration}` };
  }

  /**
   * One library's part, rebuilt only when what it shows changed: the inventory (a commit), a
   * forgotten image's figures, the drives (their activity and counters, read here each time),
   * the figures of the cartridges in them (which a drive changes in place, so read each time)
   * or the transport's device names.
   */
  private async libraryStatus(runtime: LibraryRuntime): Promise<EmuLibrary> {
    const { config, inventory } = runtime;
    const drives = inventory.drives().map((d) => ({
      ...d,
      queue_id: queueId(config.id, d.index),
      serial: config.drive_serials[d.index] ?? '',
      product: config.drive_product,
      device: this.transport?.driveName?.(config.id, d.index) ?? '',
    }));
    const changer = this.transport?.changerName?.(config.id) ?? defaultChangerName(this.config.node, config);
    const inDrives = new Map<string, CartridgeFigures>();
    for (const d of drives)
      if (d.loaded) inDrives.set(d.loaded, await this.figures(this.dirOf(config, d.loaded), true));
    const key = JSON.stringify([inventory.revision, this.statsEpoch, changer, drives, [...inDrives]]);
    const kept = this.parts.get(runtime);
    if (kept?.key === key) return kept.part;

    const list = inventory.cartridges();
    // Figures kept from an earlier pass are taken synchronously, those of the cartridges in the
    // drives come from above, and only the rest (a cartridge not seen yet) is read.
    const figures = list.map(({ label, at }) =>
      at.kind === 'drive' ? inDrives.get(label) : this.stats.get(this.dirOf(config, label)),
    );
    const missing = list.flatMap((c, i) => (figures[i] ? [] : [i]));
    await mapLimited(missing, STATS_PARALLEL, async (i) => {
      const { label, at } = list[i]!;
      figures[i] = await this.figures(this.dirOf(config, label), at.kind === 'drive');
    });
    const part: EmuLibrary = {
      id: config.id,
      serial: config.serial,
      changer,
      drives,
      slots: inventory.slots(),
      cartridges: list.map(({ label, at }, i) => ({
        label,
        ...figures[i]!,
        location: formatLocation(at),
      })),
    };
    this.parts.set(runtime, { key, part });
    return part;
  }

  /** An image's figures: kept for one outside a drive, read afresh for one in a drive. */
  private async figures(dir: string, inDrive: boolean): Promise<CartridgeFigures> {
    const kept = inDrive ? undefined : this.stats.get(dir);
    if (kept) return kept;
    // A read that a forgetStats overtook may hold figures from before the change: not kept.
    const epoch = this.statsEpoch;
    const fresh = await cartridgeStats(dir).catch((err: unknown) => {
      // A slot whose image vanished still shows, empty, so the operator sees it.
      if (isMediaError(err, 'not_found'))
        return { size_bytes: 0, phys_bytes: 0, modified: '', stub: false, capacity_bytes: 0 };
      throw err;
    });
    if (inDrive) this.stats.delete(dir);
    else if (epoch === this.statsEpoch) this.stats.set(dir, fresh);
    return fresh;
  }
}

/** mhvtl-style device queue id: library id × 100, changer at +0, drive i at +1+i. */
export function queueId(library: number, driveIndex: number): number {
  return library * 100 + 1 + driveIndex;
}

/** Until the transport names its targets: the iSCSI target of the library, LUN 0 = changer. */
export function defaultChangerName(node: string, lib: EmulatorLibraryConfig): string {
  const nodePart = node.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  return `iqn.2025-01.io.vtl:${nodePart}.${lib.serial.toLowerCase()}:lun0`;
}
