import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';

/** Reboots the machine this nodeagent runs on. */
export interface HostPower {
  reboot(reason: string): Promise<void>;
}

/** Asks the operating system to reboot (systemd first, then the classic command). */
export class OsHostPower implements HostPower {
  async reboot(_reason: string): Promise<void> {
    const run = promisify(execFile);
    try {
      await run('systemctl', ['reboot']);
    } catch {
      await run('reboot', []);
    }
  }
}

/** Appends one JSON line per reboot request to a file; used by tests instead of a real reboot. */
export class RecordingHostPower implements HostPower {
  constructor(private readonly file: string) {}

  async reboot(reason: string): Promise<void> {
    await fs.appendFile(this.file, JSON.stringify({ ts: new Date().toISOString(), reason }) + '\n');
  }
}

/**
 * In a container (charts/vtl) nothing may reboot the machine from inside: the nodeagent creates
 * a sentinel file on the host (by default /var/run/reboot-required, the file Debian's
 * unattended-upgrades writes and kured watches), and a node-level daemon drains the node and
 * reboots it. One JSON line per request, so the file also says why.
 */
export class SentinelHostPower extends RecordingHostPower {}

export function hostPowerFrom(setting: string): HostPower {
  if (setting.startsWith('record:')) return new RecordingHostPower(setting.slice('record:'.length));
  if (setting.startsWith('sentinel:')) return new SentinelHostPower(setting.slice('sentinel:'.length));
  if (setting === 'os') return new OsHostPower();
  throw new Error(`VTL_HOST_POWER must be "os", "sentinel:<file>" or "record:<file>", got "${setting}"`);
}
