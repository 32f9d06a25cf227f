import type { Logger } from 'pino';
import type { Job, LibrarySpec } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';
import type { Codec, OffsiteEngine } from './offsite.js';

/** What one job step needs: records, the emulator, the engine and a signal that ends it on shutdown. */
export interface JobStepContext {
  store: Store;
  journal: EventJournal;
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  engine: OffsiteEngine;
  codec: () => Codec;
  chunkBytes?: number;
  /** The release the bucket's system file names (VTL_VERSION; v0.0.0 when unset). */
  version?: string;
  signal: AbortSignal;
  log: Logger;
  job: Job;
  library: LibrarySpec;
}

/** A step either finishes the job's current state or asks to be run again after a delay. */
export type StepResult = void | { requeueAfterMs: number };
