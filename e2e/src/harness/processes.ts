import fs from 'node:fs/promises';

/** The processes of an appliance, by what they run. */
export type Role = 'appliance' | 'etcd' | 'apiserver' | 'controller' | 'nodeagent' | 'emulator';

const ROLES: [Role, (argv: string[]) => boolean][] = [
  ['appliance', (argv) => argv.some((a) => a.endsWith('appliance/dist/main.js'))],
  ['apiserver', (argv) => argv.some((a) => a.endsWith('apiserver/dist/server.js'))],
  ['controller', (argv) => argv.some((a) => a.endsWith('controller/dist/main.js'))],
  ['nodeagent', (argv) => argv.some((a) => a.endsWith('nodeagent/dist/main.js'))],
  ['emulator', (argv) => argv.some((a) => a.endsWith('emulator/dist/main.js'))],
  ['etcd', (argv) => (argv[0] ?? '').endsWith('etcd')],
];

/**
 * Every running process of one state directory (found by VTL_STATE_DIR in /proc/<pid>/environ
 * or the directory in its command line, as etcd's --data-dir), grouped by role.
 */
export async function processesOf(stateDir: string): Promise<Record<Role, number[]>> {
  const found: Record<Role, number[]> = {
    appliance: [],
    etcd: [],
    apiserver: [],
    controller: [],
    nodeagent: [],
    emulator: [],
  };
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [environ = '', cmdline = '', stat = ''] = await Promise.all(
      ['environ', 'cmdline', 'stat'].map((f) => fs.readFile(`/proc/${entry}/${f}`, 'utf8').catch(() => '')),
    );
    if (!cmdline || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
    const argv = cmdline.split('\0').filter(Boolean);
    const ours =
      environ.split('\0').includes(`VTL_STATE_DIR=${stateDir}`) ||
      argv.some((a) => a.includes(`${stateDir}/`));
    if (!ours) continue;
    const role = ROLES.find(([, test]) => test(argv))?.[0];
    if (role) found[role].push(Number(entry));
  }
  return found;
}

/** The processes as `role: count` for assertion messages. */
export const census = (p: Record<Role, number[]>) =>
  Object.fromEntries(Object.entries(p).map(([role, pids]) => [role, pids.length]));
