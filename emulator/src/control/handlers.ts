import { badRequest } from '@vtl/api';
import type { DataPlane } from '../dataplane.js';
import { mint, remove } from '../library-ops.js';
import type { HelloResult, LoadResult, Method, MintResult, StatusResult, UnloadResult } from './protocol.js';

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

/**
 * The control methods over a data plane. `requestShutdown` runs after the shutdown reply is
 * on its way, so the caller learns the request was accepted before the socket goes away.
 */
export function createHandlers(dp: DataPlane, requestShutdown: () => void): Handlers {
  return {
    hello: async (): Promise<HelloResult> => dp.hello(),
    status: async (): Promise<StatusResult> => ({
      libraries: await dp.status(),
      iscsi_sessions: dp.transport?.sessions?.() ?? 0,
    }),
    mint: async (p): Promise<MintResult> => mint(dp, int(p, 'library'), str(p, 'label'), int(p, 'slot')),
    remove: async (p) => remove(dp, int(p, 'library'), str(p, 'label')),
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
      const slot = moved.to.kind === 'ie' ? -moved.to.num : moved.to.num;
      return { detail: moved.detail, slot };
    },
    shutdown: async () => {
      setImmediate(requestShutdown);
      return {};
    },
  };
}
