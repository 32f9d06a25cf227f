import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

/** The median of some figures (the mean of the middle two for an even count). */
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * CPU time (user + system) in ms a process has used, or with `thread` one of its threads
 * (the process's own pid is its main thread).
 */
export async function cpuMs(pid: number, thread?: number): Promise<number> {
  const file = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const stat = await fs.readFile(file, 'utf8');
  const [utime, stime] = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 13)
    .map(Number);
  return ((utime! + stime!) * 1000) / 100; // USER_HZ is 100 on Linux
}

/**
 * The benchmark's reference (reference-server.mjs): a Fastify HTTPS route answering the bytes of
 * each file of `bodyDir` at /ref/<name>, with the key pair of `tlsDir`, as a process of its own.
 */
export async function startReference(
  tlsDir: string,
  bodyDir: string,
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [path.join(import.meta.dirname, 'reference-server.mjs'), tlsDir, bodyDir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`reference server exited with ${code}`)));
  });
  return { port, child };
}
