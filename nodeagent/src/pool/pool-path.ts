import fs from 'node:fs/promises';
import path from 'node:path';
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

/**
 * The pool path rules (refusePoolPath) on this node's own disk: `..` and symlinks are resolved
 * here first. Returns the path normalised (no `..`, no trailing `/`), as it is stored.
 */
export async function checkPoolPath(input: string, stateDir: string): Promise<string> {
  const normalised = normalisePoolPath(input);
  const candidates = [...new Set([normalised, await realPath(normalised)])];
  const states = [...new Set([path.resolve(stateDir), await realPath(path.resolve(stateDir))])];
  refusePoolPath(input, candidates, states);
  return normalised;
}
