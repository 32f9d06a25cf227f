import { LibraryStatus, NodeRecord, VtlError, keys, type ApplyResponse } from '@vtl/api';
import type { Store } from '@vtl/store';
import { refuseWithActiveJobs, refuseWithLoadedDrives, loadSnapshot, requestDataplane } from '@vtl/domain';
import type { OpContext } from '@vtl/reconcile';
import { DATAPLANE_RESTART_TIMEOUT_MS, LIBRARY_UP_TIMEOUT_MS } from './library-status.js';
import { waitOnRecords } from './record-wait.js';

/** FC result of an appliance without HBAs: nothing to build, which is the healthy state. */
const NO_HBA = { OK: true, Detail: 'No Fibre Channel HBA present; hosts reach the libraries over iSCSI.' };

/** How long activation waits for each node to rebuild its FC target for the new generation. */
export const FC_REBUILD_TIMEOUT_MS = 30_000;

/** Beyond the reconciler's own deadline, so the wait sees its verdict rather than racing it. */
const VERDICT_SLACK_MS = 5_000;

type NodeFc = NonNullable<NodeRecord['fabric']>['fc'];

/**
 * The FC result of an activation: each node's nodeagent rebuilds its FC target and reconciles
 * every ACL once it runs the new emulator generation, then reports whether the target verified.
 */
async function fcOutcome(store: Store, nodes: string[], generation: number): Promise<ApplyResponse['fc']> {
  const fabricOf = (items: Map<string, { value: NodeRecord }>, node: string) =>
    items.get(keys.nodeStatus.one(node))?.value.fabric;
  const { items } = await waitOnRecords(
    store,
    keys.nodeStatus.prefix,
    NodeRecord,
    // A nodeagent without fabric reporting has nothing to wait for.
    (items) =>
      nodes.every((n) => {
        const fabric = fabricOf(items, n);
        return fabric === undefined || fabric.fc.generation >= generation;
      }) || undefined,
    FC_REBUILD_TIMEOUT_MS,
  );
  const results: { node: string; fc: NodeFc | undefined }[] = nodes.map((node) => ({
    node,
    fc: fabricOf(items, node)?.fc,
  }));
  const withHba = results.filter((r) => r.fc && !r.fc.no_hba);
  if (withHba.length === 0) return NO_HBA;
  const failed = withHba.filter((r) => !r.fc!.verified || r.fc!.generation < generation);
  return {
    OK: failed.length === 0,
    Detail: withHba
      .map((r) =>
        r.fc!.generation < generation
          ? `${r.node}: the FC target was not rebuilt in time (${r.fc!.detail})`
          : `${r.node}: ${r.fc!.detail}`,
      )
      .join('; '),
  };
}

/**
 * Apply and data-plane restart (§4.6 rule 3, §4.2 rules 3 and 7): both are refused while a job is
 * active or queued; apply also while a drive holds a cartridge (`refuseLoaded`), a data-plane
 * restart not (the emulator keeps its inventory, so the cartridge is in its drive afterwards).
 * Asks every node's tape emulator to
 * restart with every declared library (the controller is the one writer of the data-plane
 * record), then answers from the library statuses the library reconciler derives, waiting on
 * watches. The answer and the records say the same: both come from the reconciler's verdict.
 */
export async function activate(
  store: Store,
  what: string,
  ctx: OpContext,
  opts: { refuseLoaded: boolean },
): Promise<ApplyResponse> {
  const steps: string[] = [];
  const step = async (text: string) => {
    steps.push(text);
    await ctx.step(text);
  };
  const before = await loadSnapshot(store);
  refuseWithActiveJobs(before, what);
  if (opts.refuseLoaded) {
    refuseWithLoadedDrives(before, what);
    await step('Checked: no job is active or queued and every drive is empty');
  } else await step('Checked: no job is active or queued');

  const libraries = before.libraries.filter((l) => !l.deleting).map((l) => l.id);
  const nodes = [
    ...new Set([
      ...before.nodes.map((n) => n.node),
      ...before.pools.filter((p) => before.libraries.some((l) => l.home_pool === p.id)).map((p) => p.node),
    ]),
  ];
  const { generation } = await requestDataplane(store, libraries);
  await step(
    `Restarting the tape emulator on ${nodes.join(', ') || 'no node'} with ${libraries.length} libraries`,
  );

  const nodeOf = (items: Map<string, { value: NodeRecord }>, node: string) =>
    items.get(keys.nodeStatus.one(node))?.value;
  const back = (r: NodeRecord | undefined) =>
    r !== undefined &&
    r.dataplane.generation >= generation &&
    (r.dataplane.state === 'running' || r.dataplane.state === 'failed');
  const restarted = await waitOnRecords(
    store,
    keys.nodeStatus.prefix,
    NodeRecord,
    (items) => nodes.every((n) => back(nodeOf(items, n))) || undefined,
    DATAPLANE_RESTART_TIMEOUT_MS,
  );
  for (const node of nodes) {
    const last = nodeOf(restarted.items, node);
    if (!back(last) || last!.dataplane.state !== 'running')
      throw new VtlError(
        'internal',
        `The tape emulator on node ${node} did not come back: ${back(last) ? last!.dataplane.detail : 'no status from its nodeagent'}. Check the node, then retry.`,
        { steps },
      );
    await step(`Tape emulator running on ${node} (iSCSI portal ${last!.dataplane.iscsi_portal})`);
  }
  const fc = await fcOutcome(store, nodes, generation);
  await step(`FC target: ${fc.Detail}`);

  // The library reconciler settles each library for this generation: served (active) or, past
  // its deadline, failed. Wait for that verdict on a watch and answer exactly what it says.
  const settled = (s: LibraryStatus | undefined) =>
    s !== undefined &&
    (s.dataplane_generation ?? 0) >= generation &&
    ((s.phase === 'active' && (s.served_generation ?? 0) >= generation) ||
      s.phase === 'failed' ||
      s.phase === 'degraded');
  const verdicts = await waitOnRecords(
    store,
    keys.libraryStatus.prefix,
    LibraryStatus,
    (items) => libraries.every((id) => settled(items.get(keys.libraryStatus.one(id))?.value)) || undefined,
    LIBRARY_UP_TIMEOUT_MS + VERDICT_SLACK_MS,
  );
  for (const lib of before.libraries.filter((l) => libraries.includes(l.id))) {
    const s = verdicts.items.get(keys.libraryStatus.one(lib.id))?.value;
    if (s?.state === 'active' && (s.served_generation ?? 0) >= generation) {
      await step(`Library ${lib.id} (${lib.name}) is live: active`);
      continue;
    }
    await step(
      `Library ${lib.id} (${lib.name}) did not come up within ${LIBRARY_UP_TIMEOUT_MS / 1000} s; it is pending_restart (check its node, then apply again)`,
    );
  }
  return { steps, fc };
}
