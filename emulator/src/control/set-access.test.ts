import { describe, expect, it } from 'vitest';
import type { DataPlane } from '../dataplane.js';
import { IscsiAccessTable } from '../transport/iscsi-access.js';
import type { InitiatorAccess } from './protocol.js';
import { createHandlers } from './handlers.js';

const SECRET = 'Pushed-Secret-12';

/** set_access over a data plane whose iSCSI transport only records what it was given. */
function handlers() {
  const pushed: InitiatorAccess[][] = [];
  const dp = { transport: { setAccess: (list: InitiatorAccess[]) => (pushed.push(list), 0) } };
  return { pushed, setAccess: createHandlers(dp as unknown as DataPlane, () => undefined).set_access };
}

describe('set_access with CHAP credentials', () => {
  it('passes one-way and mutual credentials through to the target', async () => {
    const { pushed, setAccess } = handlers();
    const initiators = [
      { name: 'iqn.2026-11.a:plain', libraries: [1] },
      { name: 'iqn.2026-11.a:one', libraries: [], chap: { username: 'one', secret: SECRET } },
      {
        name: 'iqn.2026-11.a:two',
        libraries: [1],
        chap: { username: 'two', secret: SECRET, mutual_username: 'vtl', mutual_secret: 'Target-Secret-1' },
      },
    ];
    expect(await setAccess({ initiators })).toEqual({ dropped: 0 });
    expect(pushed).toEqual([initiators]);
  });

  it.each([
    [{ username: 'x' }, /chap.secret must be a non-empty string/],
    [{ username: '', secret: SECRET }, /chap.username/],
    [{ username: 'x', secret: SECRET, mutual_secret: 'Other-Secret-12' }, /come together/],
  ])('refuses malformed credentials %j without echoing the secret', async (chap, message) => {
    const { pushed, setAccess } = handlers();
    const err = await setAccess({ initiators: [{ name: 'iqn.2026-11.a:x', libraries: [], chap }] }).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(SECRET);
    expect(pushed).toEqual([]);
  });

  it('looks credentials up by IQN case-insensitively and forgets them with the next push', () => {
    const table = new IscsiAccessTable(new Map(), [], [], false);
    table.replace([{ name: 'iqn.2026-11.a:one', libraries: [], chap: { username: 'one', secret: SECRET } }]);
    expect(table.chapFor('IQN.2026-11.A:ONE')).toEqual({ username: 'one', secret: SECRET });
    table.replace([{ name: 'iqn.2026-11.a:one', libraries: [] }]);
    expect(table.chapFor('iqn.2026-11.a:one')).toBe(undefined);
    expect(table.allows('iqn.2026-11.a:one')).toBe(true);
  });
});
