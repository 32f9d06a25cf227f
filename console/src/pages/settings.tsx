import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Notice, Page, useAction, ListTable } from '../components/common';
import { useLive } from '../live';

const load = async () => (await unwrap(api.GET('/api/settings'))) as Record<string, string>;

/** Every setting; an admin edits one value at a time (PUT is all or nothing). */
export function SettingsPage() {
  const settings = useLive(load, [], 30_000);
  const action = useAction();
  const [edit, setEdit] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<string>();
  const write = canWrite();
  return (
    <Page title="Settings">
      <ErrorLine error={settings.error} />
      <ErrorLine error={action.error} />
      <Notice text={notice} />
      <ListTable caption="Settings" columns={['Key', 'Value']}>
        {Object.entries(settings.data ?? {}).map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>
              {write ? (
                <form
                  class="inline"
                  onSubmit={async (e) => {
                    e.preventDefault();
                    const value = edit[k] ?? v;
                    const ok = await action.run(() =>
                      unwrap(api.PUT('/api/settings', { body: { [k]: value } })),
                    );
                    if (ok) {
                      setNotice(`${k} set.`);
                      settings.reload();
                    }
                  }}
                >
                  <input
                    aria-label={k}
                    value={edit[k] ?? v}
                    onInput={(e) => setEdit({ ...edit, [k]: e.currentTarget.value })}
                  />
                  <button type="submit" aria-label={`Save ${k}`}>
                    Save
                  </button>
                </form>
              ) : (
                v
              )}
            </td>
          </tr>
        ))}
      </ListTable>
    </Page>
  );
}
