import { useEffect, useState } from 'preact/hooks';
import { api } from './api/client';
import { session, type Session } from './api/session';
import { startLive, useConnected } from './live';
import { useRoute } from './router';
import { Login } from './pages/login';
import { ChangeInitialPassword } from './pages/first-password';
import { Overview } from './pages/overview';
import { LibraryPage } from './pages/library';
import { CartridgesPage } from './pages/cartridges';
import { EventsPage } from './pages/events';
import { TargetsPage } from './pages/targets';
import { RemotesPage } from './pages/remotes';
import { SettingsPage } from './pages/settings';
import { UsersPage } from './pages/users';
import { AuditPage } from './pages/audit';
import { SystemPage } from './pages/system';
import { UpdatesPage } from './pages/updates';

const PAGES = [
  ['overview', 'Overview', Overview],
  ['library', 'Library', LibraryPage],
  ['cartridges', 'Cartridges', CartridgesPage],
  ['events', 'Events', EventsPage],
  ['targets', 'Targets', TargetsPage],
  ['remotes', 'Remotes', RemotesPage],
  ['settings', 'Settings', SettingsPage],
  ['users', 'Users & keys', UsersPage],
  ['audit', 'Audit', AuditPage],
  ['system', 'System', SystemPage],
  ['updates', 'Updates', UpdatesPage],
] as const;

function Shell({ s }: { s: Session }) {
  const [page = 'overview'] = useRoute();
  const connected = useConnected();
  useEffect(() => startLive(), []);
  const current = PAGES.find(([id]) => id === page) ?? PAGES[0];
  const Current = current[2];
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">VTL</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map(([id, title]) => (
              <li key={id}>
                <a href={`#/${id}`} aria-current={id === current[0] ? 'page' : undefined}>
                  {title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          <span class={`dot ${connected ? 'ok' : 'off'}`} aria-hidden="true" />
          {s.username} ({s.role}){' '}
          <button
            type="button"
            onClick={() => {
              void api.POST('/api/auth/logout').finally(() => session.set(undefined));
            }}
          >
            Log out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <Current />
      </main>
    </>
  );
}

export function App() {
  const [s, setS] = useState(session.get());
  useEffect(() => {
    const off = session.subscribe(setS);
    return () => void off();
  }, []);
  if (!s) return <Login />;
  if (s.must_change_password) return <ChangeInitialPassword s={s} />;
  return <Shell s={s} key={s.token} />;
}
