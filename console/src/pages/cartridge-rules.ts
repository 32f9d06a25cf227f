interface CartridgeLike {
  label: string;
  location: string;
  local_state: string;
  last_export_gen: string;
}

/**
 * Why Export and Evict cannot succeed for a cartridge now (undefined: they can), worded as the
 * API's refusals are. `noRemote` is shown once for the page; the others beside the row.
 */
export function jobBlockers(c: CartridgeLike, busy: boolean, hasRemote: boolean) {
  const noRemote = 'No remote exists: create one on the Remotes page.';
  const evicted = c.local_state === 'evicted';
  const exportWhy = !hasRemote
    ? noRemote
    : evicted
      ? 'Export: evicted, its data is in the bucket already; import it first.'
      : busy
        ? 'Export: a job for it is under way.'
        : undefined;
  const evictWhy = !hasRemote
    ? noRemote
    : evicted
      ? 'Evict: already evicted.'
      : c.location.startsWith('drive:')
        ? 'Evict: in a drive; unload it first.'
        : !c.last_export_gen
          ? 'Evict: no export yet; export it first.'
          : busy
            ? 'Evict: a job for it is under way.'
            : undefined;
  const rowReasons = [...new Set([exportWhy, evictWhy])].filter(
    (r): r is string => r !== undefined && r !== noRemote,
  );
  return { export: exportWhy, evict: evictWhy, noRemote, rowReasons };
}
