import type { Connection } from './http.js';
import { request } from './http.js';
import type { Names } from './resources.js';

/** Loads the names of libraries, pools and remotes, so listings say names where rows carry ids. */
export async function loadNames(conn: Connection): Promise<Names> {
  const [libraries, pools, remotes] = await Promise.all(
    ['/api/libraries', '/api/pools', '/api/remotes'].map(
      async (path) => (await request(conn, 'GET', path)).body as { id: number; name: string }[],
    ),
  );
  const lookup = (list: { id: number; name: string }[] | undefined) => (id: unknown) =>
    id === null || id === undefined || id === 0 || id === ''
      ? undefined
      : (list?.find((x) => x.id === Number(id))?.name ?? `#${String(id)}`);
  return { library: lookup(libraries), pool: lookup(pools), remote: lookup(remotes) };
}
