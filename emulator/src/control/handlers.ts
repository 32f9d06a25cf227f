import { badRequest } from '@vtl/api/base';
import type { DataPlane } from '../dataplane.js';
import { cartridgeDir } from '../media/layout.js';
import { evict, mint, mintBatch, placeInIe, remove, returnToSlot, swapIn } from '../library-ops.js';
import type { ChapCredentials } from '../transport/iscsi/chap.js';
import type {
  HelloResult,
  LoadResult,
  Method,
  MintBatchResult,
  MintResult,
  SetAccessResult,
  StatusResult,
  UnloadResult,
} from './protocol.js';

/** Items one mint_batch call may carry: a full library of the largest frame. */
const MAX_MINT_BATCH = 10_000;

export type Handler = (params: unknown) => Promise<unknown>;
export type Handlers = Record<Method, Handler>;

function field(params: unknown, name: string): unknown {
  if (typeof params !== 'object' || params === null) throw badRequest('params must be an object');
  return (params as Record<string, unknown>)[name];
}

function int(params: unknown, name: string): number {
  const v = field(params, name);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`params.${name} must be an integer`);
  return v;
}

function str(params: unknown, name: string): string {
  const v = field(params, name);
  if (typeof v !== 'string') throw badRequest(`params.${name} must be a string`);
  return v;
}

/** Checks pushed CHAP credentials; messages name the field, never its value (a secret). */
function chapOf(value: unknown, where: string): ChapCredentials | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (name: string, required: boolean) => {
    const v = field(value, name);
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v === '') throw badRequest(`${where}.${name} must be a non-empty string`);
    return v;
  };
  const creds: ChapCredentials = { username: text('username', true)!, secret: text('secret', true)! };
  const mutualName = text('mutual_username', false);
  const mutualSecret = text('mutual_secret', false);
  if ((mutualName === undefined) !== (mutualSecret === undefined))
    throw badRequest(`${where}: mutual_username and mutual_secret come together`);
  return mutualName ? { ...creds, mutual_username: mutualName, mutual_secret: mutualSecret! } : creds;
}

/**
 * The control methods over a data plane. `requestShutdown` runs after the shutdown reply is
 * on its way, so the caller learns the request was accepted before the socket goes away.
 */
export function createHandlers(dp: DataPlane, requestShutdown: () => void): Handlers {
  /** Runs an op that rewrites a cartridge image outside a drive, then drops its kept figures. */
  const rewrites = async <T>(p: unknown, op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } finally {
      const lib = dp.libraries.get(int(p, 'library'));
      const label = str(p, 'label').trim().toUpperCase();
      if (lib) dp.forgetStats(cartridgeDir(lib.config.media_dir, label));
    }
  };
  return {
    hello: async (): Promise<HelloResult> => dp.hello(),
    status: async (p): Promise<StatusResult> => {
      const since = typeof p === 'object' && p !== null ? (p as { since?: unknown }).since : undefined;
      const { libraries, tag } = await dp.statusTagged();
      // The nodeagent asks every second; an idle one gets a few bytes back, not every cartridge.
      const unchanged = since === tag;
      return {
        libraries: unchanged ? [] : libraries,
        tag,
        ...(unchanged ? { unchanged } : {}),
        iscsi_sessions: dp.transport?.sessions?.() ?? 0,
        iscsi_logins: dp.transport?.logins?.() ?? [],
      };
    },
    mint: async (p): Promise<MintResult> => mint(dp, int(p, 'library'), str(p, 'label'), int(p, 'slot')),
    mint_batch: async (p): Promise<MintBatchResult> => {
      const list = field(p, 'items');
      if (!Array.isArray(list) || list.length > MAX_MINT_BATCH)
        throw badRequest(`params.items must be an array of at most ${MAX_MINT_BATCH} { label, slot }`);
      const items = list.map((item: unknown) => ({ label: str(item, 'label'), slot: int(item, 'slot') }));
      return { results: await mintBatch(dp, int(p, 'library'), items) };
    },
    remove: async (p) => rewrites(p, () => remove(dp, int(p, 'library'), str(p, 'label'))),
    load: async (p): Promise<LoadResult> => {
      const lib = dp.library(int(p, 'library'));
      const moved = await lib.inventory.load(int(p, 'drive'), str(p, 'label').trim().toUpperCase());
      return { detail: moved.detail };
    },
    unload: async (p): Promise<UnloadResult> => {
      const lib = dp.library(int(p, 'library'));
      const force = field(p, 'force');
      if (force !== undefined && typeof force !== 'boolean')
        throw badRequest('params.force must be a boolean');
      const moved = await lib.inventory.unload(int(p, 'drive'), { force: force === true });
      return { detail: moved.detail, slot: moved.to.num };
    },
    hold: async (p) => {
      await dp
        .library(int(p, 'library'))
        .inventory.hold(str(p, 'label').trim().toUpperCase(), str(p, 'holder'));
      return {};
    },
    release: async (p) => {
      await dp.library(int(p, 'library')).inventory.release(str(p, 'label').trim().toUpperCase());
      return {};
    },
    evict: async (p) => rewrites(p, () => evict(dp, int(p, 'library'), str(p, 'label'))),
    swap_in: async (p) =>
      rewrites(p, () => swapIn(dp, int(p, 'library'), str(p, 'label'), str(p, 'staging'))),
    place_in_ie: async (p) => {
      const slot = field(p, 'slot') === undefined ? 0 : int(p, 'slot');
      return rewrites(p, () => placeInIe(dp, int(p, 'library'), str(p, 'label'), str(p, 'staging'), slot));
    },
    return_to_slot: async (p) => returnToSlot(dp, int(p, 'library'), str(p, 'label'), int(p, 'slot')),
    set_access: async (p): Promise<SetAccessResult> => {
      const list = field(p, 'initiators');
      if (!Array.isArray(list)) throw badRequest('params.initiators must be an array');
      const initiators = list.map((entry, i) => {
        const libraries = field(entry, 'libraries');
        if (!Array.isArray(libraries) || libraries.some((l) => !Number.isInteger(l)))
          throw badRequest(`params.initiators[${i}].libraries must be library ids`);
        const chap = chapOf(field(entry, 'chap'), `params.initiators[${i}].chap`);
        return { name: str(entry, 'name'), libraries: libraries as number[], ...(chap ? { chap } : {}) };
      });
      if (!dp.transport?.setAccess)
        throw badRequest('this data plane has no iSCSI target to apply access to');
      return { dropped: dp.transport.setAccess(initiators) };
    },
    shutdown: async () => {
      setImmediate(requestShutdown);
      return {};
    },
  };
}
