import { VtlError, type ManagedBy } from '@vtl/api';

/**
 * The GitOps ownership claim a record carries (`managed_by`: the source that declares it, at
 * which revision and spec). The rule, as pure steps for a record module's compare-and-swap
 * update (Store.update): no etcd writes here, so each family's writes stay in its own module.
 * A claim records the source on the record (a record gone meanwhile is a conflict the next sync
 * retries); a release drops it only while that same source still holds it, so a source deleted
 * while another adopts the record never takes the other's claim away.
 */
type Owned = { managed_by?: ManagedBy | undefined };

/** The record claimed by `managed`; undefined (nothing to write) when it says so already. */
export function withManagedBy<T extends Owned>(
  cur: T | undefined,
  managed: ManagedBy,
  what: string,
): T | undefined {
  if (!cur)
    throw new VtlError(
      'conflict',
      `${what} disappeared while the sync recorded its owner; the next sync retries.`,
    );
  const m = cur.managed_by;
  if (
    m &&
    m.source === managed.source &&
    m.revision === managed.revision &&
    m.spec_hash === managed.spec_hash
  )
    return undefined;
  return { ...cur, managed_by: managed };
}

/** The record without `source`'s claim; undefined (nothing to write) when that source does not hold it. */
export function withoutManagedBy<T extends Owned>(cur: T | undefined, source: string): T | undefined {
  if (!cur || cur.managed_by?.source !== source) return undefined;
  const { managed_by: _dropped, ...rest } = cur;
  return rest as T;
}

/**
 * Releases `source`'s claim through a record module's own compare-and-swap update of one
 * record (the write stays there); true when that source held the claim.
 */
export async function releaseThrough<T extends Owned>(
  update: (mutate: (cur: T | undefined) => T | undefined) => Promise<unknown>,
  source: string,
): Promise<boolean> {
  let dropped = false;
  await update((cur) => {
    const next = withoutManagedBy(cur, source);
    dropped = next !== undefined;
    return next;
  });
  return dropped;
}
