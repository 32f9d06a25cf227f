import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { canWrite, ErrorLine, Page, useAction, ListTable, CardForm, RowButton } from '../components/common';
import { useLive } from '../live';

const load = async () => {
  const [users, keys] = await Promise.all([unwrap(api.GET('/api/users')), unwrap(api.GET('/api/apikeys'))]);
  return { users, keys };
};

type Role = 'read-only' | 'admin';

/** Users and API keys (admin only: a read-only user sees why not). A new key is shown once. */
export function UsersPage() {
  const write = canWrite();
  const data = useLive(write ? load : async () => undefined, [], 30_000);
  const action = useAction();
  const [user, setUser] = useState({ username: '', password: '', role: 'read-only' as Role });
  const [key, setKey] = useState({ name: '', role: 'read-only' as Role });
  const [shown, setShown] = useState<string>();
  if (!write)
    return (
      <Page title="Users and API keys">
        <p>Only an admin can list users and API keys.</p>
      </Page>
    );
  return (
    <Page title="Users and API keys">
      <ErrorLine error={data.error} />
      <ErrorLine error={action.error} />
      <ListTable caption="Users" columns={['User', 'Role', 'Password changed', 'Actions']}>
        {data.data?.users.map((u) => (
          <tr key={u.username}>
            <td>{u.username}</td>
            <td>{u.role}</td>
            <td>{u.password_changed_at}</td>
            <td>
              <RowButton
                danger
                label={`Delete user ${u.username}`}
                action={action}
                run={async () => {
                  await unwrap(api.DELETE('/api/users/{name}', { params: { path: { name: u.username } } }));
                  data.reload();
                }}
              >
                Delete
              </RowButton>
            </td>
          </tr>
        ))}
      </ListTable>
      <CardForm
        id="user-title"
        title="Create a user"
        onSubmit={async () => {
          const ok = await action.run(() => unwrap(api.POST('/api/users', { body: user })));
          if (ok) {
            setUser({ ...user, username: '', password: '' });
            data.reload();
          }
        }}
      >
        <label>
          User{' '}
          <input
            value={user.username}
            required
            autoComplete="off"
            onInput={(e) => setUser({ ...user, username: e.currentTarget.value })}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            value={user.password}
            required
            autoComplete="new-password"
            onInput={(e) => setUser({ ...user, password: e.currentTarget.value })}
          />
        </label>
        <label>
          Role
          <select
            value={user.role}
            onChange={(e) => setUser({ ...user, role: e.currentTarget.value as Role })}
          >
            <option value="read-only">read-only</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit">Create user</button>
      </CardForm>
      <ListTable caption="API keys" columns={['Id', 'Name', 'Role', 'Created by', 'Actions']}>
        {data.data?.keys.map((k) => (
          <tr key={k.id}>
            <td>{k.id}</td>
            <td>{k.name}</td>
            <td>{k.role}</td>
            <td>{k.created_by}</td>
            <td>
              <RowButton
                danger
                label={`Revoke key ${k.name}`}
                action={action}
                run={async () => {
                  await unwrap(api.DELETE('/api/apikeys/{id}', { params: { path: { id: String(k.id) } } }));
                  data.reload();
                }}
              >
                Revoke
              </RowButton>
            </td>
          </tr>
        ))}
      </ListTable>
      <CardForm
        id="key-title"
        title="Create an API key"
        onSubmit={async () => {
          await action.run(async () => {
            const created = await unwrap(api.POST('/api/apikeys', { body: key }));
            setShown(created.key);
            setKey({ ...key, name: '' });
            data.reload();
          });
        }}
      >
        <label>
          Name{' '}
          <input value={key.name} required onInput={(e) => setKey({ ...key, name: e.currentTarget.value })} />
        </label>
        <label>
          Role
          <select value={key.role} onChange={(e) => setKey({ ...key, role: e.currentTarget.value as Role })}>
            <option value="read-only">read-only</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit">Create key</button>
        {shown && (
          <div class="banner warn" role="status">
            <p>Copy this key now: it is shown only once.</p>
            <code class="secret">{shown}</code>
            <button type="button" onClick={() => setShown(undefined)}>
              I have copied it
            </button>
          </div>
        )}
      </CardForm>
    </Page>
  );
}
