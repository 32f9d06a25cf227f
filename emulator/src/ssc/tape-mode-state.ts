import { DEFAULT_EXTRA_MODE, type ExtraModeState } from './extra-mode-pages.js';
import { ONE_PARTITION, type PartitionRequest } from './partition-page.js';

/*
 * The drive's mode state on its own: the drive keeps it and the mode pages read and set it, so
 * neither imports the other for it (tape-drive.ts installs the commands that use the pages).
 */

/** Mode parameters the host can set (block descriptor and data compression page). */
export interface TapeModeState {
  /** 0: variable-block mode; otherwise the fixed block length. */
  blockLength: number;
  compression: boolean;
  /** Buffered mode 1: WRITE ends once its blocks are in the drive's buffer (WriteBuffer). */
  buffered: boolean;
  /** Partitioning asked for with page 11h, which FORMAT MEDIUM applies. */
  partitions: PartitionRequest;
  /** Protection, early warning and IBM vendor page values (extra-mode-pages.ts). */
  extra: ExtraModeState;
}

/** Mode parameters after power-on and what MODE SENSE reports as defaults. */
export const DEFAULT_TAPE_MODE: Readonly<TapeModeState> = {
  blockLength: 0,
  compression: true,
  buffered: true,
  partitions: ONE_PARTITION,
  extra: DEFAULT_EXTRA_MODE,
};
