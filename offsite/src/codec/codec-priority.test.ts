import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { backupLikeData } from '../testing/cartridge-fixture.js';
import { CodecPool } from './codec-pool.js';
import { compressBound } from './messages.js';

/** Nice values of this process's worker threads (Linux /proc: field 19 of each thread's stat). */
function workerNices(): number[] {
  const out: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      if (!stat.includes('(WorkerThread')) continue;
      out.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const shared = (n: number) => new Uint8Array(new SharedArrayBuffer(n));
const pool = new CodecPool({ threads: 1, nice: 5, importNice: 0 });
afterAll(() => pool.close());

describe.runIf(process.platform === 'linux')('codec thread priority', () => {
  it('compresses at the codec nice value and downloads an import at the import one', async () => {
    const data = backupLikeData(2 * 1024 * 1024, 4);
    const raw = shared(data.length);
    raw.set(data);
    const out = shared(compressBound(raw.length));
    const c = await pool.compress(raw, out);
    expect(workerNices()).toEqual([5]);

    // A server that sends half the chunk, then holds the rest until told: the fetch is running.
    const stored = Buffer.from(out.subarray(0, c.stored_bytes));
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-length': stored.length });
      res.write(stored.subarray(0, stored.length >> 1));
      void held.then(() => res.end(stored.subarray(stored.length >> 1)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const back = shared(raw.length);
      const fetched = pool.fetch(
        { url: `http://127.0.0.1:${port}/chunk`, headers: {} },
        back,
        { sha256: c.sha256, raw_bytes: raw.length, stored_bytes: stored.length, name: 'chunk-00000' },
        { idleTimeoutMs: 15_000 },
      );
      // Raising a thread's priority back needs CAP_SYS_NICE; without it the thread stays at 5.
      const expected = process.getuid?.() === 0 ? 0 : 5;
      await until(() => workerNices()[0] === expected, `the codec thread at nice ${expected}`);
      release();
      const reply = await fetched;
      expect(reply.result).toEqual({ ok: true });
      expect(Buffer.from(back).equals(data)).toBe(true);
      expect(createHash('sha256').update(stored).digest('hex')).toBe(c.sha256);

      // The next compression lowers it again.
      await pool.compress(raw, out);
      expect(workerNices()).toEqual([5]);
    } finally {
      release();
      await new Promise((r) => server.close(r));
    }
  });
});
