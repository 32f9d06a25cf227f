import {
  CARTRIDGE_LABEL,
  CartridgeSpec,
  DeleteCartridgeResponse,
  MintResponse,
  VtlError,
  badRequest,
  driveGeneration,
  findDriveModel,
  isoNow,
  jobReferencesCartridge,
  keys,
  mediaSuffix,
  notFound,
  type DriveModel,
  type LibrarySpec,
  type MintRequest,
} from '@vtl/api';
import {
  findLibrary,
  loadSnapshot,
  markCartridgeDeleting,
  mintCartridges,
  observedCartridges,
  observedLibrary,
  requireLive,
  soleLiveLibrary,
  type Snapshot,
} from '@vtl/domain';
import { waitFor } from '@vtl/reconcile';
import type { AppContext } from '../context.js';
import { nextLabels, usedVolsers, volser } from './labels.js';
import { withLock } from './lock.js';
import { viewsOf } from './views.js';

/** How long mint and delete wait for the nodeagent to realise the change on disk. */
const REALISE_WAIT_MS = 30_000;

/** `library` 0 means the only live library. */
function mintTarget(s: Snapshot, library: number): LibrarySpec {
  if (library === 0)
    return findLibrary(
      s,
      soleLiveLibrary(
        s,
        'library',
        'No library is live; apply a declared library first (POST /api/libraries/apply).',
      ),
    );
  const lib = s.libraries.find((l) => l.id === library && !l.deleting);
  if (!lib) throw badRequest(`library ${library} does not exist; GET /api/libraries lists them.`);
  requireLive(s, lib, `Library ${lib.id} is not live; apply it first (POST /api/libraries/apply).`);
  return lib;
}

/**
 * Storage slots that are empty now, not promised to a cartridge still being minted and not the
 * home (source slot) of a cartridge in a drive: that one goes back there on unload.
 */
function freeSlots(s: Snapshot, lib: LibrarySpec): number[] {
  const seen = observedLibrary(s, lib.id);
  const observed = observedCartridges(s);
  const promised = new Set(
    s.cartridges.filter((c) => c.library === lib.id && !observed.has(c.label)).map((c) => c.home_slot),
  );
  for (const d of seen?.drives ?? []) if (d.loaded && d.source_slot > 0) promised.add(d.source_slot);
  return (seen?.slots ?? [])
    .filter((slot) => slot.kind === 'storage' && slot.label === '' && !promised.has(slot.num))
    .map((slot) => slot.num);
}

/**
 * Mints cartridges (records through mintCartridges, domain/src/records/cartridges.ts) and waits
 * until the nodeagent serves them. `arrivedAt`: when the request came, for the view cache's
 * strict read.
 */
export async function mintRequested(
  ctx: AppContext,
  body: MintRequest,
  arrivedAt: number | undefined,
): Promise<MintResponse> {
  const { store } = ctx;
  const views = viewsOf(ctx);
  // Strict reads from the view cache: as current as a read of every record from etcd, without
  // reading and parsing 6,400 cartridges (16 full libraries) twice per mint.
  const s = (await views.fresh(arrivedAt, true)).snapshot();
  const lib = mintTarget(s, body.library);
  const drive = findDriveModel(lib.drive_model);
  if (!drive)
    throw new VtlError('internal', `Library ${lib.id} names an unknown drive model ${lib.drive_model}.`);
  const label = body.label.trim().toUpperCase();
  // WORM cartridges differ by their media identifier only; the emulator reads it from the label.
  const suffix = body.worm ? wormSuffixOf(drive) : drive.suffix;
  if (label && body.count > 1) throw badRequest('label must be empty when count is more than 1.');
  if (label && !CARTRIDGE_LABEL.test(label))
    throw badRequest(
      'label must be six A-Z0-9 characters plus the media suffix, e.g. ' + `${lib.label_prefix}001${suffix}.`,
    );
  if (label && !label.endsWith(suffix))
    throw badRequest(
      `label must end with ${suffix}, the ${body.worm ? 'WORM ' : ''}media suffix of ${drive.product}.`,
    );

  const specs = await withLock(store, `mint-${lib.id}`, async () => {
    // Decide on fresh records under the lock: free slots and labels cannot be promised twice.
    const fresh = (await views.fresh(performance.now(), true)).snapshot();
    const used = await usedVolsers(store, fresh);
    if (label && used.has(volser(label)))
      throw badRequest(`Volume ${volser(label)} exists here or in a bucket catalog; pick another label.`);
    const slots = freeSlots(fresh, lib);
    if (slots.length === 0)
      throw badRequest(`Library ${lib.id} has no free storage slot; delete or export cartridges first.`);
    const count = Math.min(body.count, slots.length);
    const labels = label ? [label] : nextLabels(lib.label_prefix, suffix, used, count);
    const planned: CartridgeSpec[] = labels.map((l, i) => ({
      label: l,
      library: lib.id,
      home_slot: slots[i] as number,
      created_at: isoNow(),
      deleting: false,
      last_export_gen: '',
    }));
    await mintCartridges(store, planned);
    return planned;
  });

  // The nodeagent mints in batches and publishes what it serves; the view cache sees it.
  const created = () => {
    const seen = views.observedLabels(lib.id);
    return specs.filter((c) => seen.has(c.label));
  };
  try {
    await waitFor(() => created().length === specs.length, {
      timeoutMs: REALISE_WAIT_MS,
      intervalMs: 20,
    });
  } catch {
    // Slow is not failed: the records stand and the nodeagent goes on creating the images.
    const done = created();
    throw new VtlError(
      'timeout',
      `${done.length} of ${specs.length} cartridges are up after ${REALISE_WAIT_MS / 1000} s; the rest are still being created (GET /api/cartridges shows them as they come up).`,
      { created: done.map((c) => ({ label: c.label, slot: c.home_slot })) },
    );
  }
  return MintResponse.parse({
    library: lib.id,
    size_gb: Math.round(drive.capacity_mb / 1000),
    created: specs.map((c) => ({ label: c.label, slot: c.home_slot })),
  });
}

/** Deletes a cartridge nothing uses (its node removes the image and then the record). */
export async function deleteRequested(
  { store }: AppContext,
  label: string,
  confirm: string,
): Promise<DeleteCartridgeResponse> {
  const s = await loadSnapshot(store);
  const spec = s.cartridges.find((c) => c.label === label);
  if (!spec) throw notFound(`No cartridge ${label}; GET /api/cartridges lists them.`);
  if (confirm.toUpperCase() !== label) throw badRequest(`confirm must be the label ${label}.`);
  const location = observedCartridges(s).get(label)?.location ?? '';
  if (location.startsWith('drive:'))
    throw badRequest(`${label} is in ${location.replace(':', ' ')}; unload it first.`);
  const jobs = s.jobs.filter((j) => j.label === label && jobReferencesCartridge(j.state));
  if (jobs.length > 0)
    throw badRequest(
      `${label} is referenced by ${jobs.map((j) => `job ${j.id} (${j.state})`).join(', ')}; wait for them to finish or cancel them (POST /api/jobs/{id}/cancel).`,
    );

  await markCartridgeDeleting(store, label);
  await waitFor(async () => !(await store.get(keys.cartridges.one(label), CartridgeSpec)), {
    timeoutMs: REALISE_WAIT_MS,
  }).catch(() => {
    throw new VtlError(
      'timeout',
      `${label} is being deleted; its node has not finished yet. GET /api/cartridges shows when it is gone.`,
    );
  });
  return DeleteCartridgeResponse.parse({ ok: true, label });
}

/** The WORM media identifier of a drive model's generation; 400 where there is none (LTO-10 here). */
function wormSuffixOf(drive: DriveModel): string {
  const suffix = mediaSuffix(driveGeneration(drive), true);
  if (!suffix) throw badRequest(`${drive.product} takes no WORM cartridges here; mint without worm.`);
  return suffix;
}
