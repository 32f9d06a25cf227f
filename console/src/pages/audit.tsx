import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Page, ListTable } from '../components/common';
import { useLive } from '../live';

/** Who asked for what, newest first, a page at a time (admin only). */
export function AuditPage() {
  const [before, setBefore] = useState<number[]>([]);
  const cursor = before[before.length - 1];
  const audit = useLive(
    async () =>
      canWrite()
        ? unwrap(
            api.GET('/api/audit', {
              params: { query: { limit: 50, ...(cursor ? { before: cursor } : {}) } },
            }),
          )
        : undefined,
    [cursor],
    15_000,
  );
  if (!canWrite())
    return (
      <Page title="Audit log">
        <p>Only an admin can read the audit log.</p>
      </Page>
    );
  const next = audit.data?.next_before;
  return (
    <Page title="Audit log">
      <ErrorLine error={audit.error} />
      <ListTable caption="Audit entries" columns={['When', 'Who', 'Action', 'Subject', 'Outcome']}>
        {audit.data?.entries.map((e) => (
          <tr key={e.id}>
            <td>
              <time dateTime={e.ts}>{new Date(e.ts).toLocaleString()}</time>
            </td>
            <td>
              {e.actor.kind} {e.actor.name}
            </td>
            <td>{e.action}</td>
            <td>{e.subject}</td>
            <td>
              {e.outcome} ({e.status})
            </td>
          </tr>
        ))}
      </ListTable>
      <p class="row-actions">
        <button type="button" disabled={before.length === 0} onClick={() => setBefore(before.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!next} onClick={() => next && setBefore([...before, next])}>
          Older
        </button>
      </p>
    </Page>
  );
}
