import { VtlError, badRequest, type LibrarySpec, type ObservedLibrary } from '@vtl/api';
import { libraryState, liveLibraryIds, nodeOfLibrary, observedLibrary, type Snapshot } from './snapshot.js';

/** Seconds to wait before asking again about a library whose node has not reported. */
const UNKNOWN_RETRY_SEC = 5;
/** Seconds to wait before asking again about an applied library its data plane does not serve now. */
const RESTARTING_RETRY_SEC = 5;

/** Liveness of a library: served, known not to be (never applied), or temporarily not served. */
export type Liveness =
  | { state: 'live'; observed: ObservedLibrary }
  | { state: 'not_live' }
  | { state: 'unknown'; node: string }
  | { state: 'not_served'; node: string };

/**
 * Whether the data plane serves a library, told apart from "nobody knows" and from "not now".
 * A node's status record lives under its nodeagent's lease (TTL 10 s), so its absence means the
 * node has not reported lately (a store stall, a nodeagent restart), not that the library is
 * down: an applied (`active`) library is then `unknown`. An applied library its reporting node
 * does not serve is `not_served`: the data plane is restarting (an emulator crash, an
 * activation) and comes back by itself. Only a library never applied is `not_live`.
 */
export function libraryLiveness(s: Snapshot, lib: LibrarySpec): Liveness {
  const observed = observedLibrary(s, lib.id);
  if (observed) return { state: 'live', observed };
  const node = nodeOfLibrary(s, lib);
  if (libraryState(s, lib.id) !== 'active' || !node) return { state: 'not_live' };
  return s.nodes.some((n) => n.node === node) ? { state: 'not_served', node } : { state: 'unknown', node };
}

/**
 * 503 for an applied library its node does not serve right now, saying what its data plane
 * and the controller report (the emulator restarting, the library activating, ...).
 */
export function libraryNotServed(s: Snapshot, lib: LibrarySpec, node: string): VtlError {
  const dataplane = s.nodes.find((n) => n.node === node)?.dataplane;
  const status = s.libraryStatus.get(lib.id);
  const ready = status?.conditions?.find((c) => c.type === 'Ready' && c.status !== 'True');
  const what =
    dataplane && dataplane.state !== 'running'
      ? `the tape emulator on node ${node} is ${dataplane.state}${dataplane.detail ? ` (${dataplane.detail})` : ''}`
      : ready?.message
        ? `${ready.reason}: ${ready.message}`
        : `node ${node} does not serve it right now${status?.phase ? ` (phase ${status.phase})` : ''}`;
  return new VtlError(
    'unavailable',
    `Library ${lib.id} is applied but its data plane is not serving it at the moment: ${what}. This is temporary; retry shortly, no apply is needed.`,
    {
      retry_after_sec: RESTARTING_RETRY_SEC,
      library: lib.id,
      node,
      ...(dataplane ? { dataplane: dataplane.state } : {}),
      ...(status?.phase ? { phase: status.phase } : {}),
    },
  );
}

/** 503 for a library whose state is unknown because its node's status lapsed. */
export function libraryStateUnknown(lib: LibrarySpec, node: string): VtlError {
  return new VtlError(
    'unavailable',
    `The state of library ${lib.id} is unknown: node ${node} has not reported its status lately (a store stall or a nodeagent restart). Retry shortly; no apply is needed.`,
    { retry_after_sec: UNKNOWN_RETRY_SEC, library: lib.id, node },
  );
}

/**
 * The live view of a library, or the honest refusal: 400 "not live; apply it first" only for a
 * library never applied, 503 unavailable while its node's status is missing or its data plane
 * restarts.
 */
export function requireLive(s: Snapshot, lib: LibrarySpec, notLive: string): ObservedLibrary {
  const l = libraryLiveness(s, lib);
  if (l.state === 'live') return l.observed;
  refuseTemporarily(s, lib, l);
  throw badRequest(notLive);
}

/**
 * 503 when some applied library is unknown or not served for now: a choice among "the live
 * libraries" (the only live one, "none is live") would rest on a passing picture.
 */
export function refuseWhileLivenessUnknown(s: Snapshot): void {
  for (const lib of s.libraries) if (!lib.deleting) refuseTemporarily(s, lib, libraryLiveness(s, lib));
}

/**
 * The only live library, for a request that may leave out which (`field`): 400 with `noneLive`
 * when none is, or naming them when several are; 503 while any is unknown.
 */
export function soleLiveLibrary(s: Snapshot, field: string, noneLive: string): number {
  refuseWhileLivenessUnknown(s);
  const live = liveLibraryIds(s);
  if (live.length !== 1)
    throw badRequest(
      live.length === 0
        ? noneLive
        : `${field} is required: ${live.length} libraries are live (${live.join(', ')}).`,
    );
  return live[0] as number;
}

function refuseTemporarily(s: Snapshot, lib: LibrarySpec, l: Liveness): void {
  if (l.state === 'unknown') throw libraryStateUnknown(lib, l.node);
  if (l.state === 'not_served') throw libraryNotServed(s, lib, l.node);
}
