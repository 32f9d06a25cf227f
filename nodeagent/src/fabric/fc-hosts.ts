import fs from 'node:fs/promises';
import path from 'node:path';
import { fromSysfsPortName } from './wwn.js';

/** One FC host adapter port as sysfs reports it. */
export interface FcHostPort {
  host: string;
  wwpn: string;
  state: string;
  speed: string;
}

const read = (file: string) =>
  fs.readFile(file, 'utf8').then(
    (s) => s.trim(),
    () => '',
  );

/** The FC host ports under `<sysfsRoot>/class/fc_host`; none (no HBA) when the class is absent. */
export async function readFcHostPorts(sysfsRoot: string): Promise<FcHostPort[]> {
  const dir = path.join(sysfsRoot, 'class', 'fc_host');
  const hosts = await fs.readdir(dir).catch(() => [] as string[]);
  const out: FcHostPort[] = [];
  for (const host of hosts.sort()) {
    const wwpn = fromSysfsPortName(await read(path.join(dir, host, 'port_name')));
    if (!wwpn) continue;
    const speed = await read(path.join(dir, host, 'speed'));
    out.push({
      host,
      wwpn,
      state: (await read(path.join(dir, host, 'port_state'))) || 'Unknown',
      speed: speed === '' || /^unknown$/i.test(speed) ? 'unknown' : speed,
    });
  }
  return out;
}
