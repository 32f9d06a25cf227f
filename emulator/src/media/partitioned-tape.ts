import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../util/atomic-file.js';
import {
  Cartridge,
  type BlockOptions,
  type IssuedBlock,
  type ReadResult,
  type TapePosition,
  type WriteResult,
} from './cartridge.js';
import type { SpaceResult } from './space.js';
import { MediaError } from './errors.js';
import { IndexFile } from './index-file.js';
import {
  MAX_PARTITIONS,
  partitionCapacities,
  partitionFiles,
  readMeta,
  withPartitions,
  writeMeta,
  type CartridgeMeta,
} from './layout.js';
import { dropPartitionMam, type MamAttributes } from './mam.js';

/**
 * A threaded cartridge with its partitions (LTO-5 and later can have several; most have one).
 * Each partition is a Cartridge of its own (its index and data file, its own position and end
 * of data); the head is in one of them at a time, and the tape operations act there. FORMAT
 * MEDIUM and SET CAPACITY lay the partitions out anew.
 */
export class PartitionedTape {
  private active = 0;

  private constructor(
    readonly dir: string,
    private meta: CartridgeMeta,
    private parts: Cartridge[],
    private readonly directIo: boolean,
  ) {}

  static async open(dir: string, opts: { directIo?: boolean } = {}): Promise<PartitionedTape> {
    const meta = await readMeta(dir);
    const parts = await openParts(dir, meta, opts.directIo ?? true);
    return new PartitionedTape(dir, meta, parts, opts.directIo ?? true);
  }

  private get head(): Cartridge {
    return this.parts[this.active]!;
  }

  get label(): string {
    return this.meta.label;
  }
  get partition(): number {
    return this.active;
  }
  get partitionCount(): number {
    return this.parts.length;
  }
  /** The whole tape's native capacity (what SET CAPACITY scales), whatever its partitioning. */
  get nativeCapacityBytes(): number {
    return this.meta.capacity_bytes;
  }
  partitionCapacity(p: number): number {
    return this.parts[p]?.capacityBytes ?? 0;
  }
  partitionUsed(p: number): number {
    return this.parts[p]?.sizeBytes ?? 0;
  }
  /** Blocks and filemarks in partition p. */
  partitionObjects(p: number): number {
    return this.parts[p]?.objectCount ?? 0;
  }

  // The tape operations, at the head's partition.
  get capacityBytes(): number {
    return this.head.capacityBytes;
  }
  get sizeBytes(): number {
    return this.head.sizeBytes;
  }
  get objectCount(): number {
    return this.head.objectCount;
  }
  get writeProtected(): boolean {
    return this.meta.write_protected;
  }
  get worm(): boolean {
    return this.meta.worm === true;
  }
  position(): TapePosition {
    return this.head.position();
  }
  writeBlock(block: Buffer, opts?: BlockOptions): Promise<WriteResult> {
    return this.head.writeBlock(block, opts);
  }
  issueBlock(block: Buffer, opts?: BlockOptions): Promise<IssuedBlock> {
    return this.head.issueBlock(block, opts);
  }
  writeFilemarks(n: number): Promise<WriteResult> {
    return this.head.writeFilemarks(n);
  }
  readBlock(maxLen: number): Promise<ReadResult> {
    return this.head.readBlock(maxLen);
  }
  locate(object: number): Promise<TapePosition> {
    return this.head.locate(object);
  }
  spaceBlocks(n: number): Promise<SpaceResult> {
    return this.head.spaceBlocks(n);
  }
  spaceFilemarks(n: number): Promise<SpaceResult> {
    return this.head.spaceFilemarks(n);
  }
  spaceToEod(): Promise<TapePosition> {
    return this.head.spaceToEod();
  }
  erase(): Promise<void> {
    return this.head.erase();
  }

  /** REWIND and LOAD: to BOP of partition 0. */
  async rewind(): Promise<TapePosition> {
    if (this.active !== 0) await this.head.sync();
    this.active = 0;
    return this.head.rewind();
  }

  /** Moves the head to another partition (LOCATE with CP); the caller positions it there. */
  async changePartition(p: number): Promise<void> {
    if (!Number.isInteger(p) || p < 0 || p >= this.parts.length) {
      throw new MediaError('invalid', `${this.label} has no partition ${p}`);
    }
    if (p === this.active) return;
    await this.head.sync();
    this.active = p;
  }

  /** Makes every partition's writes durable. */
  async sync(): Promise<void> {
    for (const part of this.parts) await part.sync();
  }

  readMam(partition = 0): Promise<MamAttributes> {
    return this.parts[0]!.readMam(partition);
  }
  writeMam(changes: Map<number, Buffer | null>, partition = 0): Promise<MamAttributes> {
    return this.parts[0]!.writeMam(changes, partition);
  }

  /** The drive has written encrypted blocks on this cartridge since it was last formatted. */
  get holdsEncryptedData(): boolean {
    return this.meta.encrypted_data === true;
  }

  /** Records that the cartridge holds encrypted blocks (before the first one is written). */
  async markEncryptedData(): Promise<void> {
    const meta = { ...this.meta, encrypted_data: true };
    await writeMeta(this.dir, meta);
    this.meta = meta;
    for (const part of this.parts) part.useMeta(meta);
  }

  async setWriteProtected(flag: boolean): Promise<void> {
    await this.parts[0]!.setWriteProtected(flag);
    this.meta = { ...this.meta, write_protected: flag };
    for (const part of this.parts) part.useMeta(this.meta);
  }

  /**
   * Lays the tape out as partitions of these capacities (bytes, partition 0 first), every one
   * empty; with `nativeCapacity` the tape's whole capacity changes too (SET CAPACITY). Old
   * partitions' files go first, then the new ones are created and meta.json names them: a crash
   * half way leaves an image that no longer opens, as a tape interrupted in a format is unusable
   * until formatted again.
   */
  async format(capacities: number[], nativeCapacity = this.meta.capacity_bytes): Promise<void> {
    if (capacities.length < 1 || capacities.length > MAX_PARTITIONS) {
      throw new MediaError('invalid', `a cartridge has 1 to ${MAX_PARTITIONS} partitions`);
    }
    if (this.meta.write_protected)
      throw new MediaError('write_protected', `${this.label} is write-protected`);
    if (this.meta.worm && this.parts.some((p) => p.objectCount > 0)) {
      throw new MediaError(
        'worm_overwrite',
        `${this.label} is a WORM cartridge with data: it cannot be formatted`,
      );
    }
    for (const part of this.parts) await part.close();
    this.parts = [];
    for (let p = 0; p < MAX_PARTITIONS; p++) {
      const f = partitionFiles(p);
      await rm(join(this.dir, f.index), { force: true });
      await rm(join(this.dir, f.data), { force: true });
    }
    for (let p = 0; p < capacities.length; p++) {
      const f = partitionFiles(p);
      await (await open(join(this.dir, f.data), 'wx', 0o644)).close();
      await (await IndexFile.create(join(this.dir, f.index))).close();
    }
    const { encrypted_data: _gone, ...kept } = this.meta;
    const meta = withPartitions({ ...kept, capacity_bytes: nativeCapacity }, capacities);
    await writeMeta(this.dir, meta);
    await dropPartitionMam(this.dir, capacities.length);
    await fsyncDir(this.dir);
    this.meta = meta;
    this.parts = await openParts(this.dir, meta, this.directIo);
    this.active = 0;
  }

  async close(): Promise<void> {
    for (const part of this.parts) await part.close();
  }

  /** Releases the files without syncing, as a killed process would; for crash tests only. */
  async abandon(): Promise<void> {
    for (const part of this.parts) await part.abandon();
  }
}

async function openParts(dir: string, meta: CartridgeMeta, directIo: boolean): Promise<Cartridge[]> {
  const parts: Cartridge[] = [];
  try {
    for (let p = 0; p < partitionCapacities(meta).length; p++) {
      parts.push(await Cartridge.open(dir, { directIo, partition: p }));
    }
  } catch (err) {
    for (const part of parts) await part.close();
    throw err;
  }
  return parts;
}
