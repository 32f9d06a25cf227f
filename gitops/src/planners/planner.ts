import type { ManagedBy } from '@vtl/api';
import type { DeclaredObject, KindName, SecretKeyRef } from '../model/index.js';
import type { Located } from '../parse.js';
import type { Observed } from '../observed.js';
import type { SecretLookup } from '../mapping.js';

/** What the appliance's record of a declared object is: how apply finds it again. */
export type Target =
  | { kind: 'TapePool' | 'VirtualTapeLibrary' | 'TapeRemote'; id: number; name: string }
  | { kind: 'TapeInitiator'; id: string; name: string }
  | { kind: 'ApplianceSettings'; id: 'settings'; name: string };

/** The declared object of one kind. */
export type Declared<K extends KindName> = Extract<DeclaredObject, { kind: K }>;

/** What every kind's planner is given: the declared set, what the appliance holds, and errors. */
export interface PlanContext {
  observed: Observed;
  /** Pools and the libraries not being deleted: what a declaration can match or refer to. */
  livePools: Observed['pools'];
  liveLibraries: Observed['libraries'];
  /** Records an error against a field of a declared object; the plan is then invalid. */
  err(at: Located, field: string, message: string): void;
  /** The declared objects of a kind (names unique). */
  declared(kind: KindName): Located[];
  /** Whether an object of the kind is declared in the set or held by the appliance. */
  exists(kind: KindName, name: string): boolean;
  secret: SecretLookup;
  /** Errors for a secretRef whose secret or key is not registered. */
  checkSecret(at: Located, field: string, ref: SecretKeyRef): void;
  poolName(id: number): string;
  libraryName(id: number): string;
}

/** The record a declared object matched, and how it differs. */
export interface Match {
  /** Absent: nothing matches, the object is created. */
  target?: Target;
  owner?: ManagedBy;
  /** Declared fields whose stored values differ. */
  fields: string[];
  activate?: boolean;
  pending?: boolean;
  /** Whether a re-creation (RECREATE_ANNOTATION) activates the new record; absent: not said. */
  activateOnRecreate?: boolean;
}

/** How the planner treats one kind: references, matching against records, and prune. */
export interface KindPlanner<K extends KindName> {
  /** Checks the references and secrets of one declared object. */
  checkReferences?(ctx: PlanContext, at: Located, o: Declared<K>): void;
  /** Checks across every declared object of the kind, after the references. */
  checkSet?(ctx: PlanContext): void;
  /** False when a record made through the API is not taken over (it has no owner to record). */
  adopts?: false;
  /** The error when another source owns the record, if the kind words it its own way. */
  ownedElsewhere?(owner: ManagedBy): string;
  /** Whether the appliance holds an object of the kind by this name (for references to it). */
  isStored?(ctx: PlanContext, name: string): boolean;
  /** The record the object matches, or undefined when it cannot be planned (an error says why). */
  match(ctx: PlanContext, at: Located, o: Declared<K>): Match | undefined;
  /** The records this source owns and no longer declares (matched: the ids declared ones took). */
  prunable?(ctx: PlanContext, source: string, matched: ReadonlySet<number | string>): Target[];
}
