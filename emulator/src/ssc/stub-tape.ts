import { MediaError } from '../media/errors.js';
import type { IssuedBlock, ReadResult, SpaceResult, TapePosition, WriteResult } from '../media/cartridge.js';
import type { PartitionedTape } from '../media/partitioned-tape.js';

/** The part of an open cartridge the SSC handlers use, so an evicted stub can stand in for one. */
export type TapeIo = Pick<
  PartitionedTape,
  | 'partition'
  | 'partitionCount'
  | 'partitionCapacity'
  | 'partitionUsed'
  | 'partitionObjects'
  | 'changePartition'
  | 'writeBlock'
  | 'issueBlock'
  | 'writeFilemarks'
  | 'readBlock'
  | 'locate'
  | 'spaceBlocks'
  | 'spaceFilemarks'
  | 'spaceToEod'
  | 'rewind'
  | 'position'
  | 'erase'
  | 'sync'
  | 'close'
  | 'objectCount'
  | 'sizeBytes'
  | 'capacityBytes'
  | 'writeProtected'
  | 'worm'
>;

const AT_BOP: TapePosition = { partition: 0, object: 0, filemarksBefore: 0, bop: true, eod: true };

/**
 * An evicted cartridge in a drive: the label and chip are there, the tape content is in the
 * bucket. It reads as a blank (unlabelled) tape and refuses every write with `stub`, so a host
 * can neither see stale data nor overwrite a volume whose data lives elsewhere.
 */
export class StubTape implements TapeIo {
  constructor(
    private readonly label: string,
    readonly capacityBytes: number,
    /** The cartridge is WORM (its chip says so even while the data is in the bucket). */
    readonly worm = false,
  ) {}

  readonly objectCount = 0;
  readonly sizeBytes = 0;
  readonly writeProtected = false;
  readonly partition = 0;
  readonly partitionCount = 1;

  partitionCapacity(p: number): number {
    return p === 0 ? this.capacityBytes : 0;
  }
  partitionUsed(): number {
    return 0;
  }
  partitionObjects(): number {
    return 0;
  }
  changePartition(p: number): Promise<void> {
    return p === 0 ? Promise.resolve() : this.refuse();
  }

  private refuse(): Promise<never> {
    return Promise.reject(new MediaError('stub', `${this.label} is evicted; import it back before writing`));
  }

  writeBlock(): Promise<WriteResult> {
    return this.refuse();
  }
  issueBlock(): Promise<IssuedBlock> {
    return this.refuse();
  }
  writeFilemarks(): Promise<WriteResult> {
    return this.refuse();
  }
  erase(): Promise<void> {
    return this.refuse();
  }
  readBlock(): Promise<ReadResult> {
    return Promise.resolve({ kind: 'eod' });
  }
  position(): TapePosition {
    return { ...AT_BOP };
  }
  locate(): Promise<TapePosition> {
    return Promise.resolve(this.position());
  }
  rewind(): Promise<TapePosition> {
    return Promise.resolve(this.position());
  }
  spaceToEod(): Promise<TapePosition> {
    return Promise.resolve(this.position());
  }
  spaceBlocks(n: number): Promise<SpaceResult> {
    return Promise.resolve(n === 0 ? { done: 0, stop: 'none' } : { done: 0, stop: n > 0 ? 'eod' : 'bop' });
  }
  spaceFilemarks(n: number): Promise<SpaceResult> {
    return this.spaceBlocks(n);
  }
  sync(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
