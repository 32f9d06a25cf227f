import {
  LibrarySpec,
  LibraryStatus,
  Op,
  RecoverRequest,
  VtlError,
  badRequest,
  findDriveModel,
  findLibraryVariant,
  isOpFinished,
  isoNow,
  keys,
  randomDriveSerial,
} from '@vtl/api';
import { watchOpUntilFinished, type OpHandler } from '@vtl/reconcile';
import type { EventJournal, Store } from '@vtl/store';
import {
  admitPolicyJob,
  appendOpSteps,
  cartridgeAbsent,
  declareLibraryWithApply,
  checkRecoverPreconditions,
  loadSnapshot,
  nodeOfLibrary,
  opProgressWrite,
  putCatalogEntries,
  remoteConnection,
} from '@vtl/domain';
import { catalogEntries } from './catalog-rows.js';
import { deadlineOf, remoteCall } from './remote-call.js';
import { loadOffsite } from './offsite-module.js';

/** Where a recovery has got to, kept on its op record (see Op.progress). */
interface Progress {
  /** The declared library; set in the declare's own transaction. */
  library?: number;
  /** Cartridges the topology lists. */
  carts?: number;
  /** The apply op that activates it, recorded in the same transaction. */
  apply_op?: number;
}

/** Default wait for the activation when the op does not say (the apiserver's VTL_OP_TIMEOUT_MS). */
const DEFAULT_APPLY_WAIT_MS = 120_000;

/**
 * POST /api/libraries/recover (§4.6 rule 5) as a controller operation, in three resumable
 * phases: declare the library of the bucket's topology.json (with the apply op that activates
 * it, in one transaction that also records the progress on the op), wait for that activation,
 * then refresh the catalog of the library and queue an import of each topology cartridge's
 * newest generation. A controller restart resumes at the phase the op record says.
 */
export function recoverOp(store: Store, journal: EventJournal): OpHandler {
  return async (op, ctx) => {
    const body = RecoverRequest.parse(op.params.request);
    const deadlineMs = deadlineOf(op);
    const applyWaitMs = Number(op.params.apply_wait_ms) || DEFAULT_APPLY_WAIT_MS;
    const opKey = keys.ops.one(op.id);
    let progress = (op.progress ?? {}) as Progress;
    if (progress.library === undefined) progress = await declare();
    else ctx.log.info({ progress }, 'recovery resumes');
    const libId = progress.library as number;
    const lib = (await store.get(keys.libraries.one(libId), LibrarySpec))?.value;
    if (!lib) throw new VtlError('internal', `Library ${libId} of this recovery is gone; recover again.`);

    const activation = await waitForActivation(progress.apply_op as number, lib);
    const jobs = await queueImports(lib, progress.apply_op as number);
    const steps = (await store.get(opKey, Op))?.value.steps ?? [];
    if (activation) throw activationFailed(activation, lib, jobs, steps);
    return {
      library: lib.id,
      serial: lib.serial,
      name: lib.name,
      drive_serials: lib.drive_serials,
      carts: progress.carts ?? 0,
      import_jobs: jobs,
      steps,
    };

    async function declare(): Promise<Progress> {
      const { pool } = await checkRecoverPreconditions(store, body);
      const { readTopology } = await loadOffsite();
      const conn = await remoteConnection(store, body.remote_id);
      const topology = await remoteCall('Reading the library from the bucket', conn, deadlineMs, (signal) =>
        readTopology(conn, body.system_name, body.library_serial, signal),
      );
      if (!topology)
        throw badRequest(
          `No topology.json for ${body.system_name}/${body.library_serial} in remote ${body.remote_id}; check the names (GET /api/remotes/${body.remote_id}/objects). Exports before v0.7 have none.`,
        );
      const found = findLibraryVariant(topology.product);
      const drive = findDriveModel(topology.drive_product);
      if (!found || !drive)
        throw badRequest(
          `The topology names a model this appliance does not know (${topology.product}, ${topology.drive_product}).`,
        );
      const drives = new Set<string>();
      while (drives.size < topology.num_drives) drives.add(randomDriveSerial());
      const plan = (id: number): LibrarySpec => ({
        id,
        name: body.name || topology.name,
        vendor: topology.vendor || found.model.vendor,
        product: topology.product,
        variant: found.variant.display,
        serial: body.library_serial,
        drive_model: drive.product,
        drive_serials: [...drives],
        num_drives: topology.num_drives,
        num_slots: topology.num_slots,
        num_ie: topology.num_map,
        label_prefix: topology.label_prefix,
        media_dir: `${pool.path.replace(/\/$/, '')}/${body.library_serial}`,
        home_pool: pool.id,
        created_at: isoNow(),
        deleting: false,
      });
      // Activation first: apply is refused while jobs are queued, so the imports come after it.
      // The library, its apply (an exclusive op: refused while an apply, library delete or job
      // runs) and this op's progress are recorded in one transaction.
      const progressOf = (lib: LibrarySpec, applyId: number): Progress => ({
        library: lib.id,
        carts: topology.cartridges.length,
        apply_op: applyId,
      });
      const declared = (lib: LibrarySpec) => `Declared library ${lib.id} (${lib.name}) from topology.json`;
      const { lib, applyId } = await declareLibraryWithApply(
        store,
        plan,
        { kind: 'apply', executor: 'controller', params: {}, requestedBy: op.requested_by },
        'Recover',
        (lib, applyId) => opProgressWrite(store, op.id, { ...progressOf(lib, applyId) }, declared(lib)),
      );
      ctx.log.info({ library: lib.id, apply: applyId }, 'recovered library declared');
      await ctx.announce(declared(lib));
      await ctx.step(
        `Activating library ${lib.id}: apply #${applyId} (its steps stream as apply#${applyId})`,
      );
      await journal.emit({
        kind: 'library_created',
        subject: lib.name,
        detail: `recovered from remote ${body.remote_id}: ${lib.product}, ${lib.num_slots} slots, ${topology.cartridges.length} cartridges`,
        data: { library: lib.id, serial: lib.serial, recovered: true },
      });
      return progressOf(lib, applyId);
    }

    /** Waits for the apply; undefined when the library came up live, else why it did not. */
    async function waitForActivation(applyId: number, lib: LibrarySpec): Promise<VtlError | undefined> {
      const apply = await watchOpUntilFinished(store, applyId, applyWaitMs);
      if (!apply || !isOpFinished(apply))
        return new VtlError(
          'timeout',
          `Operation ${applyId} (apply) is still ${apply?.state ?? 'pending'}; it goes on: watch GET /api/events or poll GET /api/status instead of retrying.`,
          { op: applyId, steps: apply?.steps ?? [] },
        );
      if (apply.state === 'failed') {
        const err = apply.error ?? { code: 'internal' as const, message: 'operation failed' };
        return new VtlError(err.code, err.message, { ...err.details, steps: apply.steps });
      }
      const applied = (apply.result as { steps?: string[] } | undefined)?.steps ?? apply.steps;
      // A resumed recovery finds the apply's steps recorded already.
      const recorded = (await store.get(opKey, Op))?.value.steps ?? [];
      if (!applied.every((s) => recorded.includes(s))) await appendOpSteps(store, op.id, applied);
      // An apply that ran to the end may still leave this library down (it says so in a step).
      const status = await store.get(keys.libraryStatus.one(lib.id), LibraryStatus);
      if (status?.value.state !== 'active')
        return new VtlError('internal', 'the data plane does not serve it after the apply');
      return undefined;
    }

    /**
     * Refreshes the remote's catalog entries of the library from the bucket and queues an import
     * of each topology cartridge's newest generation into its home slot. Labels that exist here
     * already, or have no complete generation, are skipped with a step saying so; an import this
     * recovery queued before a restart is found again, not queued twice.
     */
    async function queueImports(lib: LibrarySpec, applyId: number): Promise<number[]> {
      const { readTopology, scanBucket } = await loadOffsite();
      const conn = await remoteConnection(store, body.remote_id);
      const [topology, scan] = await remoteCall(
        'Reading the library from the bucket',
        conn,
        deadlineMs,
        (signal) =>
          Promise.all([
            readTopology(conn, body.system_name, body.library_serial, signal),
            scanBucket(conn, signal),
          ]),
      );
      const mine = scan.complete.filter(
        (g) => g.system === body.system_name && g.library_serial === body.library_serial,
      );
      await putCatalogEntries(store, catalogEntries(body.remote_id, mine));
      const s = await loadSnapshot(store);
      const steps: string[] = [];
      const jobs: number[] = [];
      for (const cart of topology?.cartridges ?? []) {
        const queued = s.jobs.find(
          (j) => j.kind === 'import' && j.target_library === lib.id && j.label === cart.label,
        );
        if (queued) {
          jobs.push(queued.id);
          continue;
        }
        const newest = mine
          .filter((g) => g.label === cart.label)
          .sort((a, b) => b.generation.localeCompare(a.generation))[0];
        if (!newest) {
          steps.push(`${cart.label}: no complete generation in the bucket; not imported`);
          continue;
        }
        if (s.cartridges.some((c) => c.label === cart.label)) {
          steps.push(`${cart.label}: a cartridge with this label exists here; not imported`);
          continue;
        }
        const { job, refused } = await admitPolicyJob(
          store,
          journal,
          {
            kind: 'import',
            state: 'queued',
            label: cart.label,
            library: lib.id,
            remote_id: body.remote_id,
            generation: newest.generation,
            system_name: body.system_name,
            library_serial: body.library_serial,
            target_library: lib.id,
            home_slot: cart.home_slot,
            node: nodeOfLibrary(s, lib) ?? '',
            logical_bytes: newest.logical_bytes,
            stored_bytes: newest.stored_bytes,
            detail: 'queued by recovery',
            requested_by: op.requested_by,
          },
          cartridgeAbsent(store, cart.label, body.remote_id),
          // This recovery's own apply may still run (timed out): its imports are queued anyway.
          applyId,
        );
        // Refused as POST /api/cartridges/<label>/import would be (another apply runs, the label
        // is taken meanwhile): said in the steps; the import can be requested once that is over.
        if (!job) {
          steps.push(`${cart.label}: not imported (${refused?.message ?? 'refused'})`);
          continue;
        }
        jobs.push(job.id);
      }
      steps.push(`Queued ${jobs.length} imports`);
      await appendOpSteps(store, op.id, steps);
      for (const step of steps) await ctx.announce(step);
      return jobs;
    }
  };
}

/** The error of a failed activation, carrying what was created (§4.6 rule 5: 500). */
function activationFailed(
  cause: VtlError,
  lib: LibrarySpec,
  importJobs: number[],
  steps: string[],
): VtlError {
  return new VtlError(
    'internal',
    `Library ${lib.id} was recovered but did not come up live (${cause.message}); it stays pending_restart. Apply it (POST /api/libraries/apply), then retry the imports.`,
    {
      library: lib.id,
      import_jobs: importJobs,
      steps: [...steps, ...((cause.details?.steps as string[]) ?? [])],
    },
  );
}
