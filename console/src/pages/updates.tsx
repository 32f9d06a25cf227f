import { useState } from 'preact/hooks';
import { ApiError, api, unwrap, type paths } from '../api/client';
import { session } from '../api/session';
import { canWrite, Confirm, ErrorLine, Notice, Page, useAction } from '../components/common';
import { useLive } from '../live';

type UpdateStatus =
  paths['/api/system/update-status']['get']['responses']['200']['content']['application/json'];
type UpdateRecord = NonNullable<UpdateStatus['pending']>;

const load = () => unwrap(api.GET('/api/system/update-status'));

/**
 * The bundle goes up as multipart/form-data, which the typed client does not describe: a plain
 * fetch with the same bearer token, and the API's refusal shown as it words it.
 */
async function uploadBundle(file: File, force: boolean) {
  const form = new FormData();
  if (force) form.append('force', '1');
  form.append('bundle', file);
  const token = session.get()?.token;
  const res = await fetch('/api/system/update', {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const body = await res.json().catch(() => undefined);
  if (!res.ok)
    throw new ApiError(res.status, body?.error?.code ?? 'internal', body?.error?.message ?? `${res.status}`);
  return body as { from: string; to: string; detail: string };
}

const when = (iso: string) => (iso ? new Date(iso).toLocaleString() : '—');

function RecordFacts({ r }: { r: UpdateRecord }) {
  return (
    <dl class="facts">
      <dt>From → to</dt>
      <dd>
        {r.from_version} → {r.to_version} ({r.action})
      </dd>
      <dt>Step</dt>
      <dd>{r.step || '—'}</dd>
      <dt>Attempts</dt>
      <dd>
        {r.attempts} of {r.attempt_limit}
      </dd>
      <dt>Staged</dt>
      <dd>{when(r.staged_at)}</dd>
      <dt>Deadline</dt>
      <dd>{when(r.deadline)}</dd>
      <dt>Release</dt>
      <dd>
        <code>{r.binary}</code>
      </dd>
      <dt>Previous release</dt>
      <dd>
        <code>{r.prev_binary}</code>
      </dd>
      <dt>Store snapshot</dt>
      <dd>
        <code>{r.db_snapshot}</code> (of <code>{r.db_path}</code>)
      </dd>
      <dt>Updater</dt>
      <dd>{r.unit || '—'}</dd>
    </dl>
  );
}

/** Update status (§2.20); an admin uploads a signed bundle or rolls back (docs/updates.md). */
export function UpdatesPage() {
  const status = useLive(load, [], 2000);
  const action = useAction();
  const [file, setFile] = useState<File>();
  const [force, setForce] = useState(false);
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const write = canWrite();
  const s = status.data;
  return (
    <Page title="Updates">
      <ErrorLine error={status.error} />
      <ErrorLine error={action.error} />
      <Notice text={notice} />
      {s && (
        <dl class="facts">
          <dt>Running</dt>
          <dd>
            {s.version}, built {when(s.build)}
          </dd>
          <dt>Last result</dt>
          <dd>
            {s.last_result
              ? `${s.last_result.ok ? 'succeeded' : 'failed'}: ${s.last_result.detail} (${when(s.last_result.at)})`
              : 'no update yet'}
          </dd>
        </dl>
      )}
      <h2>In progress</h2>
      {s?.pending ? <RecordFacts r={s.pending} /> : <p>No update or rollback is in progress.</p>}
      <h2>Last good update</h2>
      {s?.last_good ? <RecordFacts r={s.last_good} /> : <p>Nothing to roll back to.</p>}
      {write && (
        <>
          <h2>Upload a release</h2>
          <form
            class="card"
            onSubmit={async (e) => {
              e.preventDefault();
              if (!file) return action.setError('Choose a release bundle (.tar.gz) first.');
              const ok = await action.run(async () => {
                const res = await uploadBundle(file, force);
                setNotice(`Updating ${res.from} → ${res.to}: ${res.detail}`);
              });
              if (ok) status.reload();
            }}
          >
            <label>
              Release bundle
              <input
                type="file"
                accept=".tar.gz,application/gzip"
                onChange={(e) => setFile(e.currentTarget.files?.[0])}
              />
            </label>
            <label class="check">
              <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} />
              Install even if it is not newer (force)
            </label>
            <button type="submit" disabled={action.busy || !!s?.pending}>
              Upload and apply
            </button>
          </form>
          {s?.last_good && !s.pending && (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              Roll back to {s.last_good.from_version}
            </button>
          )}
          {confirming && s?.last_good && (
            <Confirm
              title={`Roll back to ${s.last_good.from_version}?`}
              typed="rollback"
              action="Roll back"
              error={action.error}
              onClose={() => setConfirming(false)}
              onConfirm={() =>
                action.run(async () => {
                  const res = await unwrap(
                    api.POST('/api/system/rollback', { body: { confirm: 'rollback' } }),
                  );
                  setNotice(res.detail);
                  status.reload();
                })
              }
            >
              The store snapshot taken before the update is restored: changes since are lost. Cartridge data
              and host I/O are untouched.
            </Confirm>
          )}
        </>
      )}
    </Page>
  );
}
