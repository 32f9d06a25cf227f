import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import type { Settled } from './takeover.js';

const MAIN = path.join(import.meta.dirname, 'main.js');

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
    const child = spawn(process.execPath, [MAIN], {
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

/** How long a settle run may take: a store connection, one transaction, a few directory removals. */
const SETTLE_TIMEOUT_MS = 60_000;

/**
 * Settles a pending record whose updater is gone by the updater's settle run (takeover.ts), a
 * child of the caller awaited to its end: the apiserver calls this, and writes neither the update
 * records nor the release directories itself. Resolves with what the run settled, or undefined
 * when it found nothing to settle; rejects with the run's last log lines when it fails.
 */
export async function settleAbandonedUpdate(opts: {
  env: NodeJS.ProcessEnv;
  runningVersion: string;
  releasesDir: string | undefined;
}): Promise<Settled | undefined> {
  const args = [MAIN, 'settle', '--running-version', opts.runningVersion];
  if (opts.releasesDir) args.push('--releases-dir', opts.releasesDir);
  const child = spawn(process.execPath, args, {
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: SETTLE_TIMEOUT_MS,
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c, s) => resolve([c, s]));
  });
  const last = out.trim().split('\n').pop();
  if (code !== 0 || !last)
    throw new Error(
      `the updater's settle run failed (${signal ?? `exit ${code}`}): ${err.trim().split('\n').slice(-5).join(' | ')}`,
    );
  return (JSON.parse(last) as Settled | null) ?? undefined;
}
