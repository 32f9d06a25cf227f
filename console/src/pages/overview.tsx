import { LibraryGrid } from '../components/library-grid';
import { bytes, ErrorLine, Page, Progress } from '../components/common';
import { useLive } from '../live';
import { cartridgeSets, loadJobs, loadStatus } from '../status';
import { Throughput } from '../components/throughput';

export function Overview() {
  const status = useLive(loadStatus);
  const jobs = useLive(() => loadJobs(100));
  const s = status.data;
  const { evicted, exporting } = cartridgeSets(s, jobs.data);
  const noOffsite = !!s && s.cartridges.length > 0 && s.cartridges.every((c) => !c.last_export_gen);
  return (
    <Page title="Overview">
      <ErrorLine error={status.error} />
      {noOffsite && (
        <p class="banner warn" role="status">
          No cartridge has an offsite copy: export cartridges to a remote from the Cartridges page.
        </p>
      )}
      {s && (
        <div class="pools">
          {s.pools.map((p) => (
            <div class="pool" key={p.name}>
              <span>
                Pool <strong>{p.name}</strong>: {bytes(p.fs_used_bytes)} of {bytes(p.fs_total_bytes)} used
              </span>
              <Progress value={p.fs_used_bytes} max={p.fs_total_bytes} label={`Pool ${p.name} fill`} />
            </div>
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
