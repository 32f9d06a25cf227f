import type { Logger } from 'pino';
import type { EventJournal, Store } from '@vtl/store';
import type { ApiserverConfig } from './config.js';
import type { ViewCache } from './services/view-cache.js';

/** What every route needs: the records, the journal, the settings of this process. */
export interface AppContext {
  store: Store;
  journal: EventJournal;
  config: ApiserverConfig;
  logger: Logger;
  version: string;
  startedAt: Date;
  /** Read views' records from a watch cache; buildApp starts it when absent. */
  views?: ViewCache;
}
