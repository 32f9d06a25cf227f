import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorLine, Page } from '../components/common';
import { onLiveEvent, useConnected, useLive } from '../live';

interface Row {
  key: string;
  ts: string;
  kind: string;
  subject: string;
  detail: string;
}

const matches = (r: Row, q: string, kind: string) =>
  (!kind || r.kind === kind) &&
  (!q || `${r.kind} ${r.subject} ${r.detail}`.toLowerCase().includes(q.toLowerCase()));

/** The journal: the newest events, then live ones as the stream delivers them. */
export function EventsPage() {
  const [q, setQ] = useState('');
  const [kind, setKind] = useState('');
  const [live, setLive] = useState<Row[]>([]);
  const connected = useConnected();
  const loaded = useLive(
    async () => {
      const list =
        q || kind
          ? await unwrap(
              api.GET('/api/events/search', {
                params: { query: { ...(q ? { q } : {}), ...(kind ? { kind } : {}), limit: 200 } },
              }),
            )
          : await unwrap(api.GET('/api/events/recent'));
      return list.map((e) => ({
        key: `j${e.id}`,
        ts: e.ts,
        kind: e.kind,
        subject: e.subject,
        detail: e.detail,
      }));
    },
    [q, kind],
    10_000,
  );
  // Live frames show at once; the next load (which follows every event) takes them over.
  useEffect(() => setLive([]), [loaded.data]);
  useEffect(
    () =>
      onLiveEvent((e) => {
        const row = {
          key: `s${e.id}`,
          ts: e.ts,
          kind: e.kind,
          subject: e.subject,
          detail: String(e.data.detail ?? ''),
        };
        if (matches(row, q, kind)) setLive((l) => [row, ...l].slice(0, 100));
      }),
    [q, kind],
  );
  const known = new Set((loaded.data ?? []).map((r) => `${r.ts}|${r.kind}|${r.subject}`));
  const rows = [...live.filter((r) => !known.has(`${r.ts}|${r.kind}|${r.subject}`)), ...(loaded.data ?? [])];
  const kinds = [...new Set((loaded.data ?? []).map((r) => r.kind))].sort();
  return (
    <Page title="Events">
      <p class={`badge ${connected ? 'ok' : 'off'}`} role="status">
        {connected ? 'Live' : 'Reconnecting…'}
      </p>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search{' '}
          <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} placeholder="text" />
        </label>
        <label>
          Kind
          <input
            list="event-kinds"
            value={kind}
            onInput={(e) => setKind(e.currentTarget.value)}
            placeholder="any"
          />
          <datalist id="event-kinds">
            {kinds.map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
        </label>
      </form>
      <ErrorLine error={loaded.error} />
      <ol class="events" aria-label="Events, newest first">
        {rows.map((r) => (
          <li key={r.key} class="event">
            <time dateTime={r.ts}>{new Date(r.ts).toLocaleTimeString()}</time>
            <span class="kind">{r.kind}</span>
            <span class="subject">{r.subject}</span>
            <span class="detail">{r.detail}</span>
          </li>
        ))}
      </ol>
    </Page>
  );
}
