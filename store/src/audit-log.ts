import { AUDIT_LOG_BOUND, AuditEntry, keys } from '@vtl/api';
import type { Store } from './store.js';

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'ts'>;

/**
 * The bounded audit log under keys.audit: ids from a counter, the oldest trimmed in the same
 * transaction as each append (the event journal's scheme), so the log never outgrows its bound.
 * The apiserver appends one entry per request, the updater the outcome of an update.
 */
export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly bound: number = AUDIT_LOG_BOUND,
  ) {}

  async append(entry: NewAuditEntry): Promise<AuditEntry> {
    const id = await this.store.nextId('audit');
    const record = AuditEntry.parse({ id, ts: new Date().toISOString(), ...entry });
    const txn = this.store.transaction().put(keys.audit.one(id), record);
    if (id > this.bound) txn.deleteRange(keys.audit.one(0), keys.audit.one(id - this.bound + 1));
    await txn.commit();
    return record;
  }

  /** Newest first; `before` continues after the previous page's last id. */
  async page(limit: number, before?: number): Promise<{ entries: AuditEntry[]; next_before: number | null }> {
    const opts = before === undefined ? {} : { after: keys.audit.one(before) };
    const { items } = await this.store.list(keys.audit.prefix, AuditEntry, {
      limit: limit + 1,
      reverse: true,
      ...opts,
    });
    const entries = items.slice(0, limit).map((i) => i.value);
    const more = items.length > limit;
    return { entries, next_before: more ? (entries.at(-1)?.id ?? null) : null };
  }
}
