import type { KindName } from '../model/index.js';
import { initiatorPlanner } from './initiator.js';
import { libraryPlanner } from './library.js';
import type { KindPlanner } from './planner.js';
import { poolPlanner } from './pool.js';
import { remotePlanner } from './remote.js';
import { settingsPlanner } from './settings.js';

export type { Declared, KindPlanner, Match, PlanContext, Target } from './planner.js';

/** The planner of every kind of the model's registry (KINDS): a new kind needs one here. */
export const PLANNERS: { [K in KindName]: KindPlanner<K> } = {
  TapePool: poolPlanner,
  TapeRemote: remotePlanner,
  VirtualTapeLibrary: libraryPlanner,
  TapeInitiator: initiatorPlanner,
  ApplianceSettings: settingsPlanner,
};
