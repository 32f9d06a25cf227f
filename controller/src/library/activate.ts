import {
  DataplaneSpec,
  LibraryStatus,
  NodeStatus,
  VtlError,
  isoNow,
  keys,
  type ApplyResponse,
} from '@vtl/api';
import { loadSnapshot, type Store } from '@vtl/store';
import { observedLibrary, refuseWithActiveJobs, refuseWithLoadedDrives, type Snapshot } from '@vtl/domain';
import { waitFor, type OpContext } from '@vtl/reconcile';

/** How long activation waits for every node's tape emulator to come back. */
export const DATAPLANE_RESTART_TIMEOUT_MS = 90_000;

/** How long activation waits for every library to be served by the new emulator generation. */
export const LIBRARY_UP_TIMEOUT_MS = 30_000;

/** FC result of an appliance without HBAs: nothing to build, which is the healthy state. */
const NO_HBA = { OK: true, Detail: 'No Fibre Channel HBA present; hosts reach the libraries over iSCSI.' };

/** How long activation waits for each node to rebuild its FC target for the new generation. */
export const FC_REBUILD_TIMEOUT_MS = 30_000;

/**
 * The FC result of an activation: each node's nodeagent rebuilds its FC target and reconciles
 * every ACL once it runs the new emulator generation, then reports whether the target verified.
 */
async function fcOutcome(store: Store, nodes: string[], generation: number): Promise<ApplyResponse['fc']> {
  const results: { node: string; fc: NonNullable<NodeStatus['fabric']>['fc'] | undefined }[] = [];
  for (const node of nodes) {
    let fc: NonNullable<NodeStatus['fabric']>['fc'] | undefined;
    await waitFor(
      async () => {
        const fabric = (await store.get(keys.nodeStatus.one(node), NodeStatus))?.value.fabric;
        fc = fabric?.fc;
        // A nodeagent without fabric reporting has nothing to wait for.
        return fabric === undefined || fabric.fc.generation >= generation;
      },
      { timeoutMs: FC_REBUILD_TIMEOUT_MS, intervalMs: 200 },
    ).catch(() => undefined);
    results.push({ node, fc });
  }
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
 * Apply and data-plane restart (§4.6 rule 3, §4.2 rule 3): restart every node's tape emulator
 * with every declared library, then mark the libraries that came up live as active.
 */
export async function activate(store: Store, what: string, ctx: OpContext): Promise<ApplyResponse> {
  const steps: string[] = [];
  const step = async (text: string) => {
    steps.push(text);
    await ctx.step(text);
  };
  const before = await loadSnapshot(store);
  refuseWithActiveJobs(before, what);
  refuseWithLoadedDrives(before, what);
  await step('Checked: no job is active or queued and every drive is empty');

  const libraries = before.libraries.filter((l) => !l.deleting).map((l) => l.id);
  const nodes = new Set([
    ...before.nodes.map((n) => n.node),
    ...before.pools.filter((p) => before.libraries.some((l) => l.home_pool === p.id)).map((p) => p.node),
  ]);
  const spec = await store.update(keys.dataplane, DataplaneSpec, (cur) => ({
    generation: (cur?.generation ?? 0) + 1,
    libraries,
    requested_at: isoNow(),
  }));
  const generation = spec?.value.generation ?? 0;
  await step(
    `Restarting the tape emulator on ${[...nodes].join(', ') || 'no node'} with ${libraries.length} libraries`,
  );

  for (const node of nodes) {
    let last: NodeStatus | undefined;
    try {
      await waitFor(
        async () => {
          last = (await store.get(keys.nodeStatus.one(node), NodeStatus))?.value;
          return (
            last !== undefined &&
            last.dataplane.generation >= generation &&
            (last.dataplane.state === 'running' || last.dataplane.state === 'failed')
          );
        },
        { timeoutMs: DATAPLANE_RESTART_TIMEOUT_MS, intervalMs: 200 },
      );
    } catch {
      last = undefined;
    }
    if (!last || last.dataplane.state !== 'running')
      throw new VtlError(
        'internal',
        `The tape emulator on node ${node} did not come back: ${last?.dataplane.detail ?? 'no status from its nodeagent'}. Check the node, then retry.`,
        { steps },
      );
    await step(`Tape emulator running on ${node} (iSCSI portal ${last.dataplane.iscsi_portal})`);
  }
  const fc = await fcOutcome(store, [...nodes], generation);
  await step(`FC target: ${fc.Detail}`);

  // A nodeagent restarting meanwhile republishes its libraries a moment later: wait for them
  // (bounded), then record for each exactly what the answer says, so the two never disagree.
  const servedNow = (s: Snapshot, id: number) =>
    s.nodes.some((n) => n.dataplane.generation >= generation && n.libraries.some((l) => l.id === id));
  let after = await loadSnapshot(store);
  await waitFor(
    async () => {
      after = await loadSnapshot(store);
      return libraries.every((id) => servedNow(after, id));
    },
    { timeoutMs: LIBRARY_UP_TIMEOUT_MS, intervalMs: 200 },
  ).catch(() => undefined);
  for (const lib of after.libraries.filter((l) => libraries.includes(l.id))) {
    if (!servedNow(after, lib.id) || !observedLibrary(after, lib.id)) {
      const pending: LibraryStatus = { id: lib.id, state: 'pending_restart' };
      await store.put(keys.libraryStatus.one(lib.id), pending);
      await step(
        `Library ${lib.id} (${lib.name}) did not come up within ${LIBRARY_UP_TIMEOUT_MS / 1000} s; it is pending_restart (check its node, then apply again)`,
      );
      continue;
    }
    const status: LibraryStatus = {
      id: lib.id,
      state: 'active',
      activated_at: after.libraryStatus.get(lib.id)?.activated_at ?? isoNow(),
    };
    await store.put(keys.libraryStatus.one(lib.id), status);
    await step(`Library ${lib.id} (${lib.name}) is live: active`);
  }
  return { steps, fc };
}
