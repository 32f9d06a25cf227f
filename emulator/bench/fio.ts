import { join } from 'node:path';
import type { Contender, ContenderOptions, RunSpec } from './contenders.js';
import { type RunResult, command, fsyncAll } from './processes.js';

/**
 * The disk's limit, measured the way the emulator uses it: fio (Debian `fio`) with O_DIRECT
 * and libaio on the same file system, the same block size and the same number of commands in
 * flight, sequential. Writes go over the file of the previous run in place, as the emulator
 * rewrites a cartridge from BOT in place; the first write of a run creates it. With `streams`
 * > 1, that many jobs run at once, each on its own file (the two-drive comparison).
 *
 * The time is fio's own job runtime (from the first I/O to the last completion; its process
 * start, around a second here, is left out, as the initiator leaves out its login) plus an
 * fsync of the files from outside, as every contender's writes get. Blocks carry no sequence
 * numbers: fio moves the bytes and nothing else, which is what a ceiling should do. With
 * `opts.content`, fio makes its buffers with those options (the same bytes the emulator's
 * initiator replays from the content file).
 */
export function fio(opts: ContenderOptions, streams = 1): Contender {
  const files = Array.from({ length: streams }, (_, i) => join(opts.dir, `fio-${streams}-${i}.bin`));
  const run = async (mode: 'write' | 'read', r: RunSpec): Promise<RunResult> => {
    const args = [
      '--output-format=json',
      '--ioengine=libaio',
      '--direct=1',
      `--rw=${mode}`,
      `--bs=${r.block}`,
      `--iodepth=${r.depth}`,
      `--size=${r.bytes}`,
      // No preallocation: the emulator's data file grows by writes, not fallocate.
      '--fallocate=none',
      '--group_reporting',
      ...(opts.content?.fioArgs ?? []),
      ...files.flatMap((f, i) => [`--name=s${i}`, `--filename=${f}`]),
    ];
    const report = JSON.parse(await command('fio', args)) as FioReport;
    const job = report.jobs[0];
    const side = job?.[mode];
    if (!job || !side || side.io_bytes < r.bytes * streams) {
      throw new Error(`fio ${args.join(' ')} moved ${side?.io_bytes ?? 0} bytes, not ${r.bytes * streams}`);
    }
    const seconds = side.runtime / 1000;
    let synced = seconds;
    if (mode === 'write') for (const f of files) synced += await fsyncAll(f);
    return {
      bytes: side.io_bytes,
      seconds: synced,
      cpuSeconds: ((job.usr_cpu + job.sys_cpu) / 100) * seconds * streams,
    };
  };
  return {
    name: streams === 1 ? 'fio' : `fio x${streams}`,
    streams,
    write: (r) => run('write', r),
    read: (r) => run('read', r),
    stop: async () => undefined,
  };
}

/** The parts of fio's JSON report read here (fio 3.x, with --group_reporting). */
interface FioReport {
  jobs: ({
    usr_cpu: number;
    sys_cpu: number;
  } & Record<'read' | 'write', { io_bytes: number; runtime: number }>)[];
}
