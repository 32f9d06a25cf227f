import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostPowerFrom, OsHostPower, SentinelHostPower } from './host-power.js';

describe('VTL_HOST_POWER', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('sentinel:<file> creates the file a node-level reboot daemon watches, saying why', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-power-'));
    const file = path.join(dir, 'reboot-required');
    const power = hostPowerFrom(`sentinel:${file}`);
    expect(power).toBeInstanceOf(SentinelHostPower);
    await power.reboot('firmware update');
    const [line] = (await fs.readFile(file, 'utf8')).trim().split('\n');
    expect(JSON.parse(line!)).toMatchObject({ reason: 'firmware update' });
  });

  it('os is the host reboot, anything else is refused with the choices', () => {
    expect(hostPowerFrom('os')).toBeInstanceOf(OsHostPower);
    expect(() => hostPowerFrom('container')).toThrow(/"os", "sentinel:<file>" or "record:<file>"/);
  });
});
