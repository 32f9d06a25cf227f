import type { StatusView } from './components/library-grid';
import type { Job } from './status';

/** One thing that needs the operator now, most urgent first, with where to act on it. */
export interface Alert {
  severity: 'error' | 'warning';
  text: string;
  page: string;
}

/** Pool fill (of the filesystem) at which the overview warns, and at which it calls it an error. */
export const POOL_WARN = 0.8;
export const POOL_FULL = 0.9;

/**
 * What needs attention, from what the overview loads anyway: the health probe, the status view,
 * recent jobs and the settings. Nothing here is a new truth: each alert names the page that acts.
 */
export function alertsOf(input: {
  healthy: boolean | undefined;
  down: string[];
  status: StatusView | undefined;
  jobs: Job[] | undefined;
  offsiteNagDismissed: boolean;
}): Alert[] {
  const out: Alert[] = [];
  if (input.healthy === false)
    out.push({
      severity: 'error',
      text: `Not healthy: ${input.down.join(', ') || 'the control plane'} does not answer; changes fail until it does.`,
      page: 'system',
    });
  const s = input.status;
  for (const lib of s?.libraries ?? []) {
    const name = lib.library.name;
    if (lib.phase === 'failed' || lib.phase === 'degraded') {
      const why = lib.conditions.find((c) => c.status !== 'True' && c.message)?.message;
      out.push({
        severity: 'error',
        text: `Library ${name} is ${lib.phase}${why ? `: ${why}` : '.'}`,
        page: 'library',
      });
    } else if (!lib.library.live)
      out.push({ severity: 'warning', text: `Library ${name} is not live.`, page: 'library' });
  }
  for (const p of s?.pools ?? []) {
    const fill = p.fs_total_bytes > 0 ? p.fs_used_bytes / p.fs_total_bytes : 0;
    if (fill >= POOL_WARN)
      out.push({
        severity: fill >= POOL_FULL ? 'error' : 'warning',
        text: `Pool ${p.name} is ${Math.round(fill * 100)}% full: export and evict cartridges, or grow it.`,
        page: 'cartridges',
      });
  }
  for (const j of input.jobs ?? [])
    if (j.state === 'failed' || j.state === 'interrupted')
      out.push({
        severity: j.state === 'failed' ? 'error' : 'warning',
        text: `Job #${j.id} (${j.kind} of ${j.label}) ${j.state}${j.error ? `: ${j.error}` : ''}; retry or cancel it.`,
        page: 'cartridges',
      });
  if (s?.fabrics.fc.present && !s.fabrics.fc.verified)
    out.push({
      severity: 'warning',
      text: `Fibre Channel is not verified${s.fabrics.fc.detail ? `: ${s.fabrics.fc.detail}` : '.'}`,
      page: 'targets',
    });
  for (const g of s?.gitops ?? [])
    if (g.outcome !== 'applied' && g.outcome !== 'never')
      out.push({
        severity: 'warning',
        text: `GitOps source ${g.source}: the last sync ${g.outcome.replace('_', ' ')}.`,
        page: 'system',
      });
  if (
    s &&
    s.cartridges.length > 0 &&
    s.cartridges.every((c) => !c.last_export_gen) &&
    !input.offsiteNagDismissed
  )
    out.push({
      severity: 'warning',
      text: 'No cartridge has an offsite copy: export cartridges to a remote from the Cartridges page.',
      page: 'cartridges',
    });
  return out.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1));
}
