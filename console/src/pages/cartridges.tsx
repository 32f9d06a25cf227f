import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import {
  bytes,
  canWrite,
  Progress,
  Confirm,
  ErrorLine,
  Notice,
  Page,
  useAction,
  ListTable,
} from '../components/common';
import { useLive } from '../live';
import { useNames } from '../names';
import { ACTIVE_JOB_STATES, loadJobs, type Job } from '../status';
import { MintForm, ImportForm } from './cartridge-forms';
import { jobBlockers } from './cartridge-rules';

const loadAll = async () => {
  const [cartridges, remotes] = await Promise.all([
    unwrap(api.GET('/api/cartridges')),
    unwrap(api.GET('/api/remotes')),
  ]);
  return { cartridges, remotes };
};
type Cartridge = Awaited<ReturnType<typeof loadAll>>['cartridges'][number];

function where(c: Cartridge, active: Map<string, Job>): string {
  const job = active.get(c.label);
  if (job) return `${job.kind} ${job.state}`;
  if (c.local_state === 'evicted') return 'evicted';
  return c.location.startsWith('drive:') ? 'in drive' : 'resident';
}

function JobsTable({ jobs, onChange }: { jobs: Job[]; onChange: () => void }) {
  const action = useAction();
  const write = canWrite();
  const act = (id: number, verb: 'retry' | 'cancel') =>
    action.run(async () => {
      const path = verb === 'retry' ? '/api/jobs/{id}/retry' : '/api/jobs/{id}/cancel';
      await unwrap(api.POST(path, { params: { path: { id: String(id) } } }));
      onChange();
    });
  return (
    <>
      <ErrorLine error={action.error} />
      <ListTable caption="Jobs" columns={['Job', 'Cartridge', 'State', 'Progress', write && 'Actions']}>
        {jobs.map((j) => {
          const pct =
            j.logical_bytes > 0
              ? Math.min(100, Math.round((j.bytes_done / j.logical_bytes) * 100))
              : j.state === 'succeeded'
                ? 100
                : 0;
          return (
            <tr key={j.id}>
              <td>
                #{j.id} {j.kind}
              </td>
              <td>{j.label}</td>
              <td title={j.error || j.detail}>
                {j.state}
                {j.error && <span class="job-error"> — {j.error}</span>}
              </td>
              <td>
                <span
                  class="progress"
                  role="progressbar"
                  aria-label={`Job ${j.id} progress`}
                  aria-valuemin={0}
                  aria-valuemax={100}
                  aria-valuenow={pct}
                >
                  <span class="bar" style={{ width: `${pct}%` }} />
                  <span class="pct">
                    {pct}% · {bytes(j.bytes_done)}
                  </span>
                </span>
              </td>
              {write && (
                <td>
                  {(j.state === 'failed' || j.state === 'interrupted') && (
                    <button type="button" onClick={() => void act(j.id, 'retry')}>
                      Retry #{j.id}
                    </button>
                  )}
                  {(j.state === 'detected' ||
                    j.state === 'queued' ||
                    j.state === 'interrupted' ||
                    j.state === 'failed') && (
                    <button type="button" onClick={() => void act(j.id, 'cancel')}>
                      Cancel #{j.id}
                    </button>
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </ListTable>
    </>
  );
}

export function CartridgesPage() {
  const data = useLive(loadAll);
  const jobs = useLive(() => loadJobs(200), [], 2000);
  const [q, setQ] = useState('');
  const [state, setState] = useState('all');
  const [remote, setRemote] = useState<number>();
  const [notice, setNotice] = useState<string>();
  const [deleting, setDeleting] = useState<string>();
  const action = useAction();
  const write = canWrite();
  const remotes = data.data?.remotes ?? [];
  const remoteId = remote ?? remotes[0]?.id;
  const active = new Map(
    (jobs.data ?? []).filter((j) => ACTIVE_JOB_STATES.has(j.state)).map((j) => [j.label, j]),
  );
  const rows = (data.data?.cartridges ?? []).filter(
    (c) =>
      c.label.toLowerCase().includes(q.toLowerCase()) &&
      (state === 'all' || where(c, active).startsWith(state)),
  );
  const names = useNames();
  const reload = () => (data.reload(), jobs.reload());
  const job = (label: string, kind: 'export' | 'evict') =>
    action.run(async () => {
      if (remoteId === undefined) throw new Error('Create a remote first (Remotes page)');
      const path = kind === 'export' ? '/api/cartridges/{label}/export' : '/api/cartridges/{label}/evict';
      const j = await unwrap(api.POST(path, { params: { path: { label } }, body: { remote_id: remoteId } }));
      setNotice(`Job #${j.id}: ${kind} of ${label} ${j.state}.`);
      reload();
    });

  return (
    <Page title="Cartridges">
      <ErrorLine error={data.error} />
      <Notice text={notice} />
      {write && <MintForm onMinted={(n) => (setNotice(n), reload())} />}
      <div class="filters" role="search">
        <label>
          Search{' '}
          <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} placeholder="label" />
        </label>
        <label>
          State
          <select value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="all">all</option>
            <option value="resident">resident</option>
            <option value="in drive">in drive</option>
            <option value="evicted">evicted</option>
            <option value="export">exporting</option>
            <option value="evict">evicting</option>
            <option value="import">importing</option>
          </select>
        </label>
        {write && remotes.length > 0 && (
          <label>
            Remote
            <select value={remoteId} onChange={(e) => setRemote(Number(e.currentTarget.value))}>
              {remotes.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {write && data.data && remotes.length === 0 && (
        <p class="banner warn" id="no-remote">
          Export and Evict need a remote: none exists yet. Create one on the <a href="#/remotes">Remotes</a>{' '}
          page.
        </p>
      )}
      <ErrorLine error={action.error} />
      <ListTable
        caption={`${rows.length} cartridge(s)`}
        columns={[
          'Label',
          { label: 'Library', class: 'opt' },
          'Location',
          'State',
          { label: 'Used of capacity', class: 'opt' },
          { label: 'Offsite', class: 'opt' },
          write && 'Actions',
        ]}
      >
        {rows.map((c) => {
          // The image's own capacity: its generation's, or what a host's SET CAPACITY made it.
          const capacity = c.capacity_bytes;
          const blocked = jobBlockers(c, active.has(c.label), remotes.length > 0);
          const why = `why-${c.label}`;
          const described = (reason: string | undefined) =>
            reason === undefined ? undefined : reason === blocked.noRemote ? 'no-remote' : why;
          return (
            <tr key={c.label}>
              <td>{c.label}</td>
              <td class="opt">{names.library(c.library)}</td>
              <td>{c.location}</td>
              <td>{where(c, active)}</td>
              <td class="opt">
                {capacity ? (
                  <Progress
                    value={c.size_bytes}
                    max={capacity}
                    label={`${c.label} fill`}
                    text={`${bytes(c.size_bytes)} of ${bytes(capacity)}`}
                  />
                ) : (
                  bytes(c.size_bytes)
                )}
              </td>
              <td class="opt">{c.last_export_gen || '—'}</td>
              {write && (
                <td class="row-actions">
                  <button
                    type="button"
                    disabled={!!blocked.export}
                    title={blocked.export}
                    aria-describedby={described(blocked.export)}
                    onClick={() => void job(c.label, 'export')}
                    aria-label={`Export ${c.label}`}
                  >
                    Export
                  </button>
                  <button
                    type="button"
                    disabled={!!blocked.evict}
                    title={blocked.evict}
                    aria-describedby={described(blocked.evict)}
                    onClick={() => void job(c.label, 'evict')}
                    aria-label={`Evict ${c.label}`}
                  >
                    Evict
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => (action.setError(undefined), setDeleting(c.label))}
                    aria-label={`Delete ${c.label}`}
                  >
                    Delete
                  </button>
                  {blocked.rowReasons.length > 0 && (
                    <small class="why" id={why}>
                      {blocked.rowReasons.join(' ')}
                    </small>
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </ListTable>
      {write && <ImportForm remotes={remotes} onStarted={(n) => (setNotice(n), reload())} />}
      <JobsTable jobs={jobs.data ?? []} onChange={reload} />
      {deleting && (
        <Confirm
          title={`Delete cartridge ${deleting}?`}
          typed={deleting}
          action="Delete cartridge"
          error={action.error}
          onClose={() => setDeleting(undefined)}
          onConfirm={() =>
            action.run(async () => {
              await unwrap(
                api.DELETE('/api/cartridges/{label}', {
                  params: { path: { label: deleting } },
                  body: { confirm: deleting },
                }),
              );
              setNotice(`Deleted ${deleting}.`);
              reload();
            })
          }
        >
          <p>Its data is erased from the pool. Offsite copies stay in their bucket.</p>
        </Confirm>
      )}
    </Page>
  );
}
