/**
 * How the Events page words an event: a name for its kind and whether it is a periodic figure
 * (hidden by default); its severity comes with it from the API. The kinds are the spec's §6.2
 * table; an unknown kind shows as its words (the set is not a stable contract).
 */
const KIND_NAMES: Record<string, string> = {
  job_update: 'Job update',
  maint_step: 'Maintenance step',
  maint_done: 'Maintenance finished',
  system: 'System',
  drive_activity: 'Drive activity',
  pool_stats: 'Pool figures',
  fc_state: 'Fibre Channel state',
  cart_minted: 'Cartridge minted',
  cart_deleted: 'Cartridge deleted',
  cart_imported: 'Cartridge imported',
  cart_moved: 'Cartridge moved',
  manual_load: 'Loaded by hand',
  manual_unload: 'Unloaded by hand',
  library_created: 'Library created',
  pool_created: 'Pool created',
  pool_removed: 'Pool removed',
  storage_setup: 'Storage set up',
  storage_grown: 'Storage grown',
  storage_torndown: 'Storage torn down',
  catalog_rebuild: 'Catalog rebuilt',
  dataplane_restart: 'Data-plane restart',
  gitops_applied: 'GitOps applied',
  gitops_drift_corrected: 'GitOps drift corrected',
};

/** Kinds that report figures on a timer: noise among what happened, so hidden unless asked for. */
export const PERIODIC_KINDS = new Set(['pool_stats', 'drive_activity']);

/** `cart_minted` → "Cartridge minted"; an unknown `emu_tape_full` → "Emu tape full". */
export function kindName(kind: string): string {
  const known = KIND_NAMES[kind];
  if (known) return known;
  const words = kind.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A subject as people say it: `drive:1:0` → "lib-a drive 0", `job:7` → "job #7". */
export function subjectText(subject: string, libraryName: (id: number) => string): string {
  const drive = /^drive:(\d+):(\d+)$/.exec(subject);
  if (drive) return `${libraryName(Number(drive[1]))} drive ${drive[2]}`;
  const job = /^job:(\d+)$/.exec(subject);
  if (job) return `job #${job[1]}`;
  return subject;
}

/** Date and time in the browser's locale: events reach back days, a time alone is ambiguous. */
export const dateTime = (ts: string) =>
  new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
