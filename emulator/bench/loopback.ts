import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Contender, type ContenderOptions, together } from './contenders.js';
import { type RunResult, command } from './processes.js';

const SOURCE = fileURLToPath(new URL('../loopback.c', import.meta.url));

/**
 * The transport's ceiling: bare TCP over loopback, in C, with no iSCSI and no disk
 * (loopback.c). Every target here, the emulator and tgt alike, moves its data this way on the
 * same cores as its initiator before it writes a byte, so where this is below fio on a run, no
 * target can reach fio's rate on it. Compiled with the system's C compiler (Debian
 * `build-essential`) into the benchmark's directory; the depth does not apply (a stream), and a
 * read is the same stream as a write.
 */
export async function loopback(opts: ContenderOptions, streams = 1): Promise<Contender> {
  const binary = join(opts.dir, 'loopback');
  await command('cc', ['-O2', '-o', binary, SOURCE]);
  const run = async (r: { block: number; bytes: number }): Promise<RunResult> => {
    const args = ['--bytes', String(r.bytes), '--block', String(r.block)];
    const one = async () => JSON.parse(await command(binary, args)) as RunResult;
    return together(Array.from({ length: streams }, one));
  };
  return {
    name: streams === 1 ? 'tcp' : `tcp x${streams}`,
    streams,
    write: run,
    read: run,
    stop: async () => undefined,
  };
}
