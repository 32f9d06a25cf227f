import type {
  Condition,
  ConditionType,
  DataplaneSpec,
  LibraryPhase,
  LibrarySpec,
  LibraryStatus,
  NodeLibraryStatus,
  NodeRecord,
} from '@vtl/api';
import type { StaleNode } from './heartbeats.js';

/** How long an activation waits for every node's tape emulator to come back. */
export const DATAPLANE_RESTART_TIMEOUT_MS = 90_000;

/** How long a node running the new generation has to serve each of its libraries. */
export const LIBRARY_UP_TIMEOUT_MS = 30_000;

/** Everything one library's status is derived from, as the reconciler's informers hold it. */
export interface LibraryInputs {
  lib: LibrarySpec;
  /** The spec's mod revision: the generation the status is derived from. */
  specRevision: number;
  /** The node that owns the library's pool. */
  node: string | undefined;
  dataplane: DataplaneSpec | undefined;
  /** Node records of the nodes now reporting (their lease holds and their heartbeat is on time). */
  nodes: ReadonlyMap<string, NodeRecord>;
  /** Nodes left out of `nodes` though their lease holds: their heartbeat is overdue. */
  stale?: ReadonlyMap<string, StaleNode>;
  /** The per-library records of this library, one per node that has one. */
  served: readonly NodeLibraryStatus[];
  previous: LibraryStatus | undefined;
  now: number;
}

/** The derived status, and when the reconciler must look again though nothing changed. */
export interface Derived {
  status: LibraryStatus;
  recheckAfterMs?: number;
}

/**
 * Sets a condition: its lastTransitionTime moves only when its status changes, as Kubernetes
 * does it, so "since when is it not ready" survives every rewrite of reason or message.
 */
export function setCondition(
  previous: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition {
  const before = previous?.find((c) => c.type === next.type);
  return { ...next, lastTransitionTime: before?.status === next.status ? before.lastTransitionTime : now };
}

interface Verdict {
  phase: LibraryPhase;
  state: LibraryStatus['state'];
  ready: { ok: boolean; reason: string; message: string };
  degraded?: { reason: string; message: string };
  recheckAfterMs?: number;
}

/**
 * The library lifecycle (docs/architecture.md): level-triggered from the desired data plane
 * and what the nodes report. `state` keeps the API's two values: a library the data plane was
 * told to serve and did serve in the current generation stays `active` when its node stops
 * reporting (its liveness is then unknown, not "apply it"); Ready and Degraded say the rest.
 */
export function deriveLibraryStatus(inp: LibraryInputs): Derived {
  const { lib, dataplane, previous, now } = inp;
  const generation = dataplane?.generation ?? 0;
  const servingOn = inp.served.find((s) => s.library !== undefined && inp.nodes.has(s.node));
  const servingNode = servingOn ? inp.nodes.get(servingOn.node) : undefined;
  const node = servingOn?.node ?? inp.node ?? 'its node';
  const nodeRecord = inp.node ? inp.nodes.get(inp.node) : servingNode;
  const servedNow = servingNode !== undefined && servingNode.dataplane.generation >= generation;
  const wanted = dataplane?.libraries.includes(lib.id) ?? false;
  const quiet = inp.node ? inp.stale?.get(inp.node) : undefined;
  // How long the node has been quiet, named with the time it was last heard and the limit it broke.
  const quietFor = quiet
    ? `has not refreshed its status since ${quiet.lastSeenAt} (more than ${quiet.staleAfterMs / 1000} s) though its lease is still held; its nodeagent may be hung (check its log, or restart it)`
    : undefined;

  const verdict = ((): Verdict => {
    if (!wanted)
      return {
        phase: 'pending_restart',
        state: 'pending_restart',
        ready: {
          ok: false,
          reason: 'PendingRestart',
          message: `Declared, not yet in the data plane; an apply (POST /api/libraries/apply) activates it.`,
        },
      };
    if (servedNow)
      return {
        phase: 'active',
        state: 'active',
        ready: {
          ok: true,
          reason: 'Active',
          message: `Served by node ${node} in data-plane generation ${generation}.`,
        },
      };
    if (previous?.served_generation === generation && previous.state === 'active') {
      // It was up in this generation and is not any more: its node went away or dropped it.
      const lost = !nodeRecord;
      const reason = lost ? 'NodeNotReporting' : 'NotServed';
      const message = quietFor
        ? `Node ${node} ${quietFor}; the library counts as not served until it reports.`
        : lost
          ? `Node ${node} has not reported its status within its lease; the library is not served until it does.`
          : `Node ${node} reports its data plane without this library; check the node's emulator (GET /api/status).`;
      return {
        phase: 'degraded',
        state: 'active',
        ready: { ok: false, reason, message },
        degraded: { reason, message },
      };
    }
    if (
      nodeRecord &&
      nodeRecord.dataplane.generation >= generation &&
      nodeRecord.dataplane.state === 'failed'
    ) {
      const message = `The tape emulator on node ${node} failed: ${nodeRecord.dataplane.detail}. Check the node, then apply again.`;
      return {
        phase: 'failed',
        state: 'pending_restart',
        ready: { ok: false, reason: 'DataplaneFailed', message },
        degraded: { reason: 'DataplaneFailed', message },
      };
    }
    // Activating: the node's emulator restarts, then has a while to serve the library.
    const running =
      nodeRecord && nodeRecord.dataplane.generation >= generation && nodeRecord.dataplane.state === 'running';
    const deadline = running
      ? Date.parse(nodeRecord.dataplane.started_at) + LIBRARY_UP_TIMEOUT_MS
      : Date.parse(dataplane!.requested_at) + DATAPLANE_RESTART_TIMEOUT_MS + LIBRARY_UP_TIMEOUT_MS;
    if (Number.isFinite(deadline) && now >= deadline) {
      const message = running
        ? `Node ${node} runs data-plane generation ${generation} but did not serve the library within ${LIBRARY_UP_TIMEOUT_MS / 1000} s; check its node, then apply again.`
        : `Node ${node} did not bring its tape emulator to generation ${generation} in time; check the node, then apply again.`;
      return {
        phase: 'failed',
        state: 'pending_restart',
        ready: { ok: false, reason: 'ActivationFailed', message },
        degraded: { reason: 'ActivationFailed', message },
      };
    }
    return {
      phase: 'activating',
      // A re-apply keeps an active library active while the emulator restarts (as before).
      state: previous?.state === 'active' ? 'active' : 'pending_restart',
      ready: {
        ok: false,
        reason: 'Activating',
        message: `Waiting for node ${node} to serve the library in data-plane generation ${generation}.`,
      },
      recheckAfterMs: Number.isFinite(deadline) ? Math.max(0, deadline - now) + 50 : undefined,
    };
  })();

  const at = new Date(now).toISOString();
  const servingMessage = servingOn
    ? `Node ${servingOn.node} serves it (data-plane generation ${servingNode!.dataplane.generation}).`
    : quietFor
      ? `Node ${node} ${quietFor}.`
      : nodeRecord
        ? `Node ${node} reports its data plane without this library.`
        : `Node ${node} is not reporting its status.`;
  const conditions: Condition[] = [
    setCondition(
      previous?.conditions,
      {
        type: 'Ready',
        status: verdict.ready.ok ? 'True' : 'False',
        reason: verdict.ready.reason,
        message: verdict.ready.message,
      },
      at,
    ),
    setCondition(
      previous?.conditions,
      {
        type: 'Serving',
        status: servingOn ? 'True' : 'False',
        reason: servingOn ? 'Served' : nodeRecord ? 'NotServed' : 'NodeNotReporting',
        message: servingMessage,
      },
      at,
    ),
    setCondition(
      previous?.conditions,
      verdict.degraded
        ? { type: 'Degraded', status: 'True', ...verdict.degraded }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'Nothing is wrong.' },
      at,
    ),
  ];
  const status: LibraryStatus = {
    id: lib.id,
    state: verdict.state,
    ...(verdict.state === 'active'
      ? { activated_at: previous?.state === 'active' ? (previous.activated_at ?? at) : at }
      : {}),
    phase: verdict.phase,
    observedGeneration: inp.specRevision,
    ...(verdict.phase === 'active'
      ? { served_generation: generation }
      : previous?.served_generation !== undefined
        ? { served_generation: previous.served_generation }
        : {}),
    dataplane_generation: generation,
    conditions,
  };
  return { status, recheckAfterMs: verdict.recheckAfterMs };
}

export const conditionOf = (s: LibraryStatus | undefined, type: ConditionType) =>
  s?.conditions?.find((c) => c.type === type);
