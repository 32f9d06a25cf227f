import { api, unwrap } from './api/client';
import type { StatusView } from './components/library-grid';

export type Job = NonNullable<Awaited<ReturnType<typeof loadJobs>>>[number];

export const loadStatus = (): Promise<StatusView> => unwrap(api.GET('/api/status'));
export const loadJobs = (limit = 200) => unwrap(api.GET('/api/jobs', { params: { query: { limit } } }));

/**
 * Whether a job state counts as under way. Keyed by the state union of the API's generated types,
 * so a state the API adds or renames fails the console build until it is placed here.
 */
const UNDER_WAY: Record<Job['state'], boolean> = {
  detected: true,
  queued: true,
  quiescing: true,
  uploading: true,
  verifying: true,
  downloading: true,
  succeeded: false,
  failed: false,
  interrupted: false,
  cancelled: false,
};

export const ACTIVE_JOB_STATES = new Set(
  (Object.keys(UNDER_WAY) as Job['state'][]).filter((state) => UNDER_WAY[state]),
);

/** What the grid colours by: evicted labels and labels with an export or evict under way. */
export function cartridgeSets(status: StatusView | undefined, jobs: Job[] | undefined) {
  const evicted = new Set(
    (status?.cartridges ?? []).filter((c) => c.local_state === 'evicted').map((c) => c.label),
  );
  const exporting = new Set(
    (jobs ?? []).filter((j) => j.kind !== 'import' && ACTIVE_JOB_STATES.has(j.state)).map((j) => j.label),
  );
  return { evicted, exporting };
}
