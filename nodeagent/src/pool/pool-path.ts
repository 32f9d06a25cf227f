import fs from 'node:fs/promises';
import path from 'node:path';
import { badRequest } from '@vtl/api';
import { normalisePoolPath, refusePoolPath } from '@vtl/domain';

/** The path with symlinks resolved as far as it exists (the rest is created by the nodeagent). */
async function realPath(p: string): Promise<string> {
  const rest: string[] = [];
  let current = p;
  for (;;) {
    try {
      return path.join(await fs.realpath(current), ...rest.reverse());
    } catch {
      if (current === '/') return p;
      rest.push(path.basename(current));
      current = path.dirname(current);
    }
  }
}

const within = (child: string, parent: string) =>
  child === parent || child.startsWith(parent === '/' ? '/' : parent + '/');

/** A path as written and with its symlinks resolved (one entry when they are the same). */
const bothForms = async (p: string) => {
  const normalised = normalisePoolPath(p);
  return [...new Set([normalised, await realPath(normalised)])];
};

/**
 * The pool path rules (refusePoolPath) on this node's own disk: `..` and symlinks are resolved
 * here first, for every rule: the system and state directory rules, and no overlap (the same
 * directory, a parent or a child) with `pools`, the node's other pools, themselves resolved too.
 * Returns the path normalised (no `..`, no trailing `/`), as it is stored.
 */
export async function checkPoolPath(
  input: string,
  stateDir: string,
  pools: readonly { name: string; path: string }[] = [],
): Promise<string> {
  const candidates = await bothForms(input);
  refusePoolPath(input, candidates, await bothForms(path.resolve(stateDir)));
  for (const pool of pools)
    for (const other of await bothForms(pool.path))
      for (const p of candidates)
        if (within(p, other) || within(other, p))
          throw badRequest(
            `Path ${p === candidates[0] ? input : `${input} (resolves to ${p})`} overlaps pool "${pool.name}" (${pool.path}${other === normalisePoolPath(pool.path) ? '' : `, which resolves to ${other}`}); a pool needs a directory of its own.`,
            { reason: 'overlap' },
          );
  return candidates[0]!;
}
