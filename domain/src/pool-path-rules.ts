import path from 'node:path';
import { badRequest } from '@vtl/api';

/**
 * System trees a pool may not be placed in or on: the OS, its configuration, kernel interfaces
 * and runtime tmpfs. Writing tape images there breaks the host or is lost at reboot.
 */
const SYSTEM_TREES = [
  '/etc',
  '/usr',
  '/boot',
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
];
/** Directories a pool may live below but not be: a pool there would take over the whole tree. */
const SYSTEM_ROOTS = ['/', '/var', '/var/lib', '/home', '/srv', '/mnt', '/opt', '/tmp'];
/** Inside the state dir, only these hold pools: the default pool and a directory for more. */
const STATE_DIR_POOL_AREAS = ['pool', 'pools'];

const within = (child: string, parent: string) =>
  child === parent || child.startsWith(parent === '/' ? '/' : parent + '/');

/**
 * Refuses a pool path over the appliance or the system (docs/api.md "Pools"): inside the state dir
 * (its etcd data, keys, logs) except the pool areas, a parent of the state dir, a system tree or
 * a system root itself. `candidates` are the path normalised and, where the node resolved them,
 * with its symlinks resolved; `stateDirs` likewise. Pure: the node resolves symlinks on its own
 * disk (nodeagent/src/pool/pool-path.ts), the apiserver checks the path as written.
 */
export function refusePoolPath(input: string, candidates: string[], stateDirs: string[]): void {
  for (const p of candidates) {
    const shown = p === input ? input : `${input} (resolves to ${p})`;
    const tree = SYSTEM_TREES.find((t) => within(p, t));
    if (tree)
      throw badRequest(
        `Path ${shown} is inside the system directory ${tree}; place the pool on a data volume.`,
        {
          reason: 'system_dir',
        },
      );
    if (SYSTEM_ROOTS.includes(p))
      throw badRequest(
        `Path ${shown} is a system directory; use a directory of its own below it (e.g. ${path.join(p, 'vtl-pool')}).`,
        { reason: 'system_dir' },
      );
    for (const state of stateDirs) {
      const inPoolArea = STATE_DIR_POOL_AREAS.some(
        (area) => within(p, path.join(state, area)) && p !== state,
      );
      if (within(p, state) && !inPoolArea)
        throw badRequest(
          `Path ${shown} is inside the appliance's state directory ${state}, which holds its database, keys and logs; place the pool elsewhere (or under ${path.join(state, 'pools')}).`,
          { reason: 'state_dir' },
        );
      if (within(state, p))
        throw badRequest(
          `Path ${shown} contains the appliance's state directory ${state}; place the pool in a directory of its own.`,
          { reason: 'state_dir' },
        );
    }
  }
}

/** The path as it is stored: absolute, no `..`, no trailing `/`. */
export const normalisePoolPath = (input: string) => path.resolve('/', input);
