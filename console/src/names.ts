import { api, unwrap } from './api/client';
import { useLive } from './live';

/** Library and pool names by id: what the pages show where the API answers with an id. */
export interface Names {
  library: (id: number) => string;
  pool: (id: number) => string;
  libraries: { id: number; name: string }[];
}

const loadNames = async () => {
  const [libraries, pools] = await Promise.all([
    unwrap(api.GET('/api/libraries')),
    unwrap(api.GET('/api/pools')),
  ]);
  return {
    libraries: libraries.map((l) => ({ id: l.id, name: l.name })),
    pools: pools.map((p) => ({ id: p.id, name: p.name })),
  };
};

/** A name, or `#<id>` while the names load or for an id no longer listed (a deleted library). */
const lookup = (list: { id: number; name: string }[] | undefined, id: number) =>
  list?.find((x) => x.id === id)?.name || `#${id}`;

export function useNames(): Names {
  const names = useLive(loadNames, [], 30_000);
  return {
    library: (id) => lookup(names.data?.libraries, id),
    pool: (id) => lookup(names.data?.pools, id),
    libraries: names.data?.libraries ?? [],
  };
}
