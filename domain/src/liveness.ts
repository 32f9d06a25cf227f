import { VtlError, badRequest, type LibrarySpec, type ObservedLibrary } from '@vtl/api';
import { libraryState, nodeOfLibrary, observedLibrary, type Snapshot } from './snapshot.js';

/** Seconds to wait before asking again about a library whose node has not reported. */
const UNKNOWN_RETRY_SEC = 5;

/**
 * Whether the data plane serves a library, told apart from "nobody knows". A node's status
 * record lives under its nodeagent's lease (TTL 10 s), so its absence means the node has not
 * reported lately (a store stall, a nodeagent restart), not that the library is down. A library
 * the controller has applied (`active`) whose node has no status is therefore `unknown`; only
 * one whose node reports without it, or that was never applied, is `not_live`.
 */
export function libraryLiveness(
  s: Snapshot,
  lib: LibrarySpec,
): { state: 'live'; observed: ObservedLibrary } | { state: 'not_live' } | { state: 'unknown'; node: string } {
  const observed = observedLibrary(s, lib.id);
  if (observed) return { state: 'live', observed };
  const node = nodeOfLibrary(s, lib);
  if (libraryState(s, lib.id) === 'active' && node && !s.nodes.some((n) => n.node === node))
    return { state: 'unknown', node };
  return { state: 'not_live' };
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
 * The live view of a library, or the honest refusal: 400 "not live; apply it first" only when
 * that is known, 503 unavailable while its node's status is missing.
 */
export function requireLive(s: Snapshot, lib: LibrarySpec, notLive: string): ObservedLibrary {
  const l = libraryLiveness(s, lib);
  if (l.state === 'live') return l.observed;
  if (l.state === 'unknown') throw libraryStateUnknown(lib, l.node);
  throw badRequest(notLive);
}

/**
 * 503 when some applied library's state is unknown: a choice among "the live libraries" (the
 * only live one, "none is live") would rest on a partial picture.
 */
export function refuseWhileLivenessUnknown(s: Snapshot): void {
  for (const lib of s.libraries) {
    if (lib.deleting) continue;
    const l = libraryLiveness(s, lib);
    if (l.state === 'unknown') throw libraryStateUnknown(lib, l.node);
  }
}
