import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { session, type Session } from '../api/session';
import { ErrorLine, Field, useAction } from '../components/common';

/**
 * The first login with the initial password (the session says `must_change_password`): nothing
 * else is shown until a new one is set. The API takes the current password as proof, as it does
 * for every change of one's own password.
 */
export function ChangeInitialPassword({ s }: { s: Session }) {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const action = useAction();
  useEffect(() => {
    document.title = 'Choose a new password · VTL console';
  }, []);
  const mismatch = repeat !== '' && repeat !== password;
  return (
    <main class="login">
      <form
        class="card"
        aria-labelledby="first-password-title"
        onSubmit={async (e) => {
          e.preventDefault();
          if (mismatch) return;
          await action.run(async () => {
            await unwrap(
              api.PUT('/api/users/{name}/password', {
                params: { path: { name: s.username } },
                body: { current_password: current, password },
              }),
            );
            session.set({ ...s, must_change_password: false });
          });
        }}
      >
        <h1 id="first-password-title">Choose a new password</h1>
        <p class="hint">
          {s.username} still has the initial password from the file initial-admin-password. Choose your own
          (at least 12 characters); then delete that file.
        </p>
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onValue={setCurrent}
        />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          value={password}
          onValue={setPassword}
        />
        <Field
          label="Repeat the new password"
          type="password"
          autoComplete="new-password"
          value={repeat}
          onValue={setRepeat}
          problem={mismatch ? 'repeat-problem' : undefined}
        />
        {mismatch && (
          <p class="field-error" id="repeat-problem">
            The two new passwords differ.
          </p>
        )}
        <ErrorLine error={action.error} />
        <button type="submit" class="primary" disabled={action.busy || mismatch}>
          Set password
        </button>
        <button
          type="button"
          onClick={() => void api.POST('/api/auth/logout').finally(() => session.set(undefined))}
        >
          Log out
        </button>
      </form>
    </main>
  );
}
