import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { session } from '../api/session';
import { ErrorLine, Field, useAction } from '../components/common';

export function Login() {
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <main class="login">
      <form
        class="card"
        aria-labelledby="login-title"
        onSubmit={async (e) => {
          e.preventDefault();
          await action.run(async () => {
            const s = await unwrap(api.POST('/api/auth/login', { body: { username, password } }));
            session.set(s);
          });
        }}
      >
        <h1 id="login-title">VTL console</h1>
        <p class="hint">
          The first admin password is in the file initial-admin-password of the appliance's state directory.
        </p>
        <Field label="User" name="username" autoComplete="username" value={username} onValue={setUsername} />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onValue={setPassword}
        />
        <ErrorLine error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Log in
        </button>
      </form>
    </main>
  );
}
