import fs from 'node:fs';
import path from 'node:path';

const guestDir = path.resolve(import.meta.dirname, '../../src/guest');

/** What the guest's backup-host session needs to know about the appliance. */
export interface GuestScriptParams {
  /** The guest's initiator name (on the target's allow-list). */
  initiatorIqn: string;
  /** The portal the guest logs in to (forwarded to the target by QEMU). */
  portal: string;
  /** The serial of the drive mtx calls drive 0: the guest picks its st device by it. */
  driveSerial: string;
  numDrives: number;
  /** The storage slot `mtx load` takes a cartridge from (and `mtx unload` returns it to). */
  loadSlot: number;
  /** `mtx transfer fromSlot toSlot`. */
  fromSlot: number;
  toSlot: number;
  /** Mutual CHAP for discovery and login (open-iscsi's auth.username/password and *_in). */
  chap?: { username: string; secret: string; targetUsername: string; targetSecret: string };
}

const quote = (v: string | number) => `'${String(v).replaceAll("'", `'\\''`)}'`;

/**
 * The guest's /test.sh: the parameters as shell variables, guest-lib.sh, then `before` (a local
 * fabric's set-up), guest-common.sh (login, the devices) and the session's steps (guest-steps.sh unless `steps` names another file there).
 */
export function guestScript(
  p: GuestScriptParams,
  steps: string | string[] = 'guest-steps.sh',
  extra: Record<string, string | number> = {},
  /** Scripts placed before guest-common.sh (a local fabric's `fabric_setup`). */
  before: string[] = [],
): string {
  const vars = {
    ...extra,
    IQN: p.initiatorIqn,
    PORTAL: p.portal,
    DRIVE_SERIAL: p.driveSerial,
    NUM_DRIVES: p.numDrives,
    LOAD_SLOT: p.loadSlot,
    FROM_SLOT: p.fromSlot,
    TO_SLOT: p.toSlot,
    CHAP_USER: p.chap?.username ?? '',
    CHAP_SECRET: p.chap?.secret ?? '',
    CHAP_TARGET_USER: p.chap?.targetUsername ?? '',
    CHAP_TARGET_SECRET: p.chap?.targetSecret ?? '',
  };
  return guestShell(vars, [...before, 'guest-common.sh', ...[steps].flat()]);
}

/**
 * A guest's /test.sh from parts of this directory: the variables (shell-quoted), guest-lib.sh
 * (the result and step helpers every session uses), then the files in order.
 */
export function guestShell(vars: Record<string, string | number>, files: string[]): string {
  const header = Object.entries(vars).map(([k, v]) => `${k}=${quote(v)}`);
  const body = ['guest-lib.sh', ...files].map((f) => fs.readFileSync(path.join(guestDir, f), 'utf8'));
  return `#!/bin/sh\n${header.join('\n')}\n${body.join('\n')}`;
}
