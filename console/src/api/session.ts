/**
 * The session token lives in memory and in this tab's sessionStorage: a reload keeps the operator
 * logged in, closing the tab forgets it, and no cookie exists that another site could make the
 * browser send (so there is no CSRF to defend against). The strict CSP is what keeps script that
 * could read it out of the page. See docs/console.md.
 */
const KEY = 'vtl.session';

export interface Session {
  token: string;
  username: string;
  role: 'read-only' | 'admin';
  expires_at: string;
  /** Still the initial password: the console asks for a new one before anything else. */
  must_change_password?: boolean;
}

let current: Session | undefined = load();
const listeners = new Set<(s: Session | undefined) => void>();

function load(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    const s = raw ? (JSON.parse(raw) as Session) : undefined;
    return s && Date.parse(s.expires_at) > Date.now() ? s : undefined;
  } catch {
    return undefined;
  }
}

export const session = {
  get: () => current,
  set(s: Session | undefined) {
    current = s;
    if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
    else sessionStorage.removeItem(KEY);
    for (const l of listeners) l(s);
  },
  subscribe(l: (s: Session | undefined) => void) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};
