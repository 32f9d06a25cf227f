import { LibraryGrid } from '../components/library-grid';
import { ErrorLine, Page } from '../components/common';
import { PoolSummary } from '../components/pool-summary';
import { useLive } from '../live';
import { cartridgeSets, loadJobs, loadStatus } from '../status';
import { Throughput } from '../components/throughput';
import { api, unwrap } from '../api/client';
import { alertsOf } from '../alerts';

/** The public health probe: 503 answers with the same body, naming what is down. */
const loadHealth = async () => {
  const { data, error } = await api.GET('/healthz');
  return (data ?? error) as { ok: boolean; down?: string[] } | undefined;
};
const loadNag = async () =>
  ((await unwrap(api.GET('/api/settings'))) as Record<string, string>)['nag.no_offsite_dismissed'] === '1';

export function Overview() {
  const status = useLive(loadStatus);
  const jobs = useLive(() => loadJobs(100));
  const health = useLive(loadHealth, [], 10_000);
  const nag = useLive(loadNag, [], 30_000);
  const s = status.data;
  const { evicted, exporting } = cartridgeSets(s, jobs.data);
  const alerts = alertsOf({
    healthy: status.error ? false : health.data?.ok,
    down: health.data?.down ?? (status.error ? ['the apiserver'] : []),
    status: s,
    jobs: jobs.data,
    offsiteNagDismissed: nag.data ?? true,
  });
  const errors = alerts.filter((a) => a.severity === 'error').length;
  return (
    <Page title="Overview">
      <ErrorLine error={status.error} />
      <section class="health" aria-labelledby="health-title">
        <h2 id="health-title">
          Health:{' '}
          <span class={`badge ${errors ? 'bad' : alerts.length ? 'warn' : 'ok'}`}>
            {!s ? 'checking…' : errors ? 'needs attention' : alerts.length ? 'warnings' : 'healthy'}
          </span>
        </h2>
        {s && alerts.length === 0 && <p>Nothing needs you now.</p>}
        {alerts.length > 0 && (
          <ul class="alerts" aria-label="What needs attention">
            {alerts.map((a) => (
              <li key={a.text} class={`alert ${a.severity}`}>
                <span class={`severity ${a.severity}`}>{a.severity}</span> {a.text}{' '}
                <a href={`#/${a.page}`}>Open {a.page}</a>
              </li>
            ))}
          </ul>
        )}
      </section>
      {s && (
        <div class="pools">
          {s.pools.map((p) => (
            <PoolSummary key={p.name} pool={p} />
          ))}
          <div class="pool">
            iSCSI:{' '}
            {s.fabrics.iscsi.present ? s.fabrics.iscsi.portals.join(', ') || 'no portal' : 'not serving'} ·{' '}
            {s.fabrics.iscsi.sessions} session(s)
          </div>
        </div>
      )}
      {s && s.libraries.length === 0 && (
        <p>
          No library is live yet. Declare one and apply it on the <a href="#/library">Library</a> page.
        </p>
      )}
      {s?.libraries.map((lib) => (
        <article class="library" key={lib.library.id} aria-labelledby={`lib-${lib.library.id}`}>
          <h2 id={`lib-${lib.library.id}`}>
            {lib.library.name}{' '}
            <small>
              {lib.library.product} · {lib.library.serial}
            </small>{' '}
            <span class={`badge ${lib.library.live ? 'ok' : 'off'}`}>
              {lib.library.live ? 'live' : 'not live'}
            </span>
          </h2>
          <LibraryGrid lib={lib} evicted={evicted} exporting={exporting} />
          <Throughput drives={lib.drives} />
        </article>
      ))}
    </Page>
  );
}
