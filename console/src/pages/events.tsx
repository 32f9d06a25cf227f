import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { ErrorLine, Page } from '../components/common';
import { onLiveEvent, useConnected, useLive } from '../live';
import { useNames } from '../names';
import { dateTime, kindName, PERIODIC_KINDS, subjectText } from '../event-format';

interface Row {
  key: string;
  ts: string;
  kind: string;
  subject: string;
  detail: string;
  severity: 'info' | 'warning' | 'error';
}

const matches = (r: Row, q: string, kind: string, periodic: boolean) =>
  (!kind || r.kind === kind) &&
  (periodic || kind === r.kind || !PERIODIC_KINDS.has(r.kind)) &&
  (!q || `${r.kind} ${r.subject} ${r.detail}`.toLowerCase().includes(q.toLowerCase()));

/** The journal: the newest events, then live ones as the stream delivers them. */
export function EventsPage() {
  const [q, setQ] = useState('');
  const [kind, setKind] = useState('');
  const [periodic, setPeriodic] = useState(false);
  const names = useNames();
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
        severity: e.severity,
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
          severity: e.severity,
        };
        if (matches(row, q, kind, periodic)) setLive((l) => [row, ...l].slice(0, 100));
      }),
    [q, kind, periodic],
  );
  const known = new Set((loaded.data ?? []).map((r) => `${r.ts}|${r.kind}|${r.subject}`));
  const rows = [
    ...live.filter((r) => !known.has(`${r.ts}|${r.kind}|${r.subject}`)),
    ...(loaded.data ?? []),
  ].filter((r) => matches(r, '', kind, periodic));
  const kinds = [...new Set((loaded.data ?? []).map((r) => r.kind))].sort();
  const hidden = (loaded.data ?? []).length + live.length - rows.length;
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
              <option key={k} value={k} label={kindName(k)} />
            ))}
          </datalist>
        </label>
        <label class="check">
          <input type="checkbox" checked={periodic} onChange={(e) => setPeriodic(e.currentTarget.checked)} />
          Show periodic figures (pool figures, drive activity)
        </label>
      </form>
      {!periodic && hidden > 0 && <p class="hint">{hidden} periodic figure(s) hidden.</p>}
      <ErrorLine error={loaded.error} />
      <ol class="events" aria-label="Events, newest first">
        {rows.map((r) => (
          <li key={r.key} class={`event ${r.severity}`}>
            <time dateTime={r.ts}>{dateTime(r.ts)}</time>
            <span class={`severity ${r.severity}`}>{r.severity}</span>
            <span class="kind" title={r.kind}>
              {kindName(r.kind)}
            </span>
            <span class="subject">{subjectText(r.subject, names.library)}</span>
            <span class="detail">{r.detail}</span>
          </li>
        ))}
      </ol>
    </Page>
  );
}
