import type { LibraryLifecycle } from '@vtl/api';
import type { Snapshot } from '@vtl/domain';

/**
 * A library's lifecycle as the controller's library reconciler last wrote it (phase,
 * observedGeneration, conditions): shown by GET /api/libraries/{lib}/status, on each row of
 * GET /api/libraries and on each library of GET /api/status. A library the reconciler has not
 * looked at yet is `declared`, with no conditions.
 */
export function libraryLifecycle(s: Snapshot, id: number): LibraryLifecycle {
  const status = s.libraryStatus.get(id);
  return {
    phase: status?.phase ?? 'declared',
    observedGeneration: status?.observedGeneration ?? null,
    conditions: status?.conditions ?? [],
  };
}
