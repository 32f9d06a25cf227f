import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import type { Appliance } from '../src/harness/appliance.js';

/** The pid of the appliance's apiserver (a child of its launcher). */
export async function apiserverPid(app: Appliance): Promise<number> {
  const launcher = (app as unknown as { child: ChildProcess }).child.pid!;
  for (const pid of (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p)).map(Number)) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const cmd = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (
      Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === launcher &&
      cmd.includes('apiserver/dist/server.js')
    )
      return pid;
  }
  throw new Error('no apiserver process under the launcher');
}
