import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import {
  canWrite,
  ErrorLine,
  Notice,
  Page,
  useAction,
  ListTable,
  CardForm,
  RowButton,
} from '../components/common';
import { useLive } from '../live';

const load = () => unwrap(api.GET('/api/remotes'));
const EMPTY = {
  name: '',
  endpoint: '',
  region: '',
  bucket: '',
  prefix: '',
  access_key: '',
  secret_key: '',
  path_style: true,
};

/** S3 remotes for offsite copies; Test writes, reads and deletes a probe object. */
export function RemotesPage() {
  const remotes = useLive(load, [], 15_000);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [f, setF] = useState(EMPTY);
  const write = canWrite();
  const input = (k: keyof typeof EMPTY) => (
    <input
      value={String(f[k])}
      autoComplete="off"
      onInput={(e) => setF({ ...f, [k]: e.currentTarget.value })}
    />
  );
  return (
    <Page title="Remotes">
      <ErrorLine error={remotes.error} />
      <Notice text={notice} />
      <ErrorLine error={action.error} />
      <ListTable
        caption="S3 remotes"
        columns={['Name', 'Endpoint', 'Bucket', 'Last test', write && 'Actions']}
      >
        {remotes.data?.map((r) => (
          <tr key={r.id}>
            <td>{r.name}</td>
            <td>{r.endpoint || 'AWS'}</td>
            <td>
              {r.bucket}/{r.prefix}
            </td>
            <td>{r.last_test_at ? `${r.last_test_ok ? 'ok' : 'failed'}: ${r.last_test_detail}` : 'never'}</td>
            {write && (
              <td class="row-actions">
                <RowButton
                  label={`Test ${r.name}`}
                  action={action}
                  run={async () => {
                    const t = await unwrap(
                      api.POST('/api/remotes/{id}/test', { params: { path: { id: String(r.id) } } }),
                    );
                    setNotice(`${r.name}: ${t.ok ? 'ok' : 'failed'} — ${t.detail}`);
                    remotes.reload();
                  }}
                >
                  Test
                </RowButton>
                <RowButton
                  danger
                  label={`Delete ${r.name}`}
                  action={action}
                  run={async () => {
                    await unwrap(api.DELETE('/api/remotes/{id}', { params: { path: { id: String(r.id) } } }));
                    remotes.reload();
                  }}
                >
                  Delete
                </RowButton>
              </td>
            )}
          </tr>
        ))}
      </ListTable>
      {write && (
        <CardForm
          id="remote-title"
          title="Add a remote"
          onSubmit={async () => {
            const ok = await action.run(() => unwrap(api.POST('/api/remotes', { body: f })));
            if (ok) {
              setF(EMPTY);
              remotes.reload();
            }
          }}
        >
          <label>Name {input('name')}</label>
          <label>Endpoint {input('endpoint')}</label>
          <label>Region {input('region')}</label>
          <label>Bucket {input('bucket')}</label>
          <label>Prefix {input('prefix')}</label>
          <label>Access key {input('access_key')}</label>
          <label>
            Secret key
            <input
              type="password"
              value={f.secret_key}
              autoComplete="new-password"
              onInput={(e) => setF({ ...f, secret_key: e.currentTarget.value })}
            />
          </label>
          <button type="submit" disabled={action.busy}>
            Add remote
          </button>
        </CardForm>
      )}
    </Page>
  );
}
