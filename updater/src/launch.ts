import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';

/**
 * Starts the detached updater for one pending update: its own session (setsid), no pipe to the
 * apiserver, output appended to <stateDir>/logs/updater.log, so the control-plane restart it
 * causes (which stops this apiserver) does not stop it. Returns its unit name.
 */
export function launchUpdater(opts: { stateDir: string; updateId: string; env: NodeJS.ProcessEnv }): {
  unit: string;
  pid: number;
} {
  const logs = path.join(opts.stateDir, 'logs');
  const out = openSync(path.join(logs, 'updater.log'), 'a', 0o600);
  try {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'main.js')], {
      env: { ...opts.env, VTL_UPDATE_ID: opts.updateId },
      stdio: ['ignore', out, out],
      detached: true,
    });
    child.unref();
    const pid = child.pid ?? 0;
    return { unit: unitName(opts.updateId, pid), pid };
  } finally {
    closeSync(out);
  }
}

/** How an updater names itself in the record and the 202: the update's id and its pid. */
export const unitName = (updateId: string, pid: number) => `vtl-updater-${updateId.slice(0, 8)} (pid ${pid})`;
