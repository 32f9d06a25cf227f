import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stopLeftovers } from './leftovers.js';
import { PidFiles } from './pid-files.js';

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

describe('pid files and the leftovers of a killed run', () => {
  let dir: string;
  const children: ChildProcess[] = [];
  const logger = pino({ level: 'silent' });
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-pids-'));
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
  });
  const start = (args: string[], opts: { env?: Record<string, string>; argv0?: string } = {}) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, ...opts.env },
      ...(opts.argv0 ? { argv0: opts.argv0 } : {}),
    });
    children.push(child);
    return child;
  };
  const said = (child: ChildProcess, word: string) =>
    new Promise<void>((resolve) =>
      child.stdout!.on('data', (d: Buffer) => d.toString().includes(word) && resolve()),
    );

  it('lists a recorded process only while it runs the recorded command', async () => {
    const pids = new PidFiles(dir);
    const child = start(['-e', 'setTimeout(() => {}, 60_000)', 'controller/dist/main.js']);
    expect(await pids.write('controller', child.pid!, 'controller/dist/main.js')).toBe(true);
    expect((await pids.running()).map((r) => [r.name, r.pid])).toEqual([['controller', child.pid]]);
    // A pid file whose marker the process does not run is someone else's: never signalled.
    expect(await pids.write('apiserver', child.pid!, 'apiserver/dist/server.js')).toBe(true);
    expect((await pids.running()).map((r) => r.name)).toEqual(['controller']);
    await expect(fs.access(path.join(dir, 'apiserver.pid'))).rejects.toThrow();

    child.kill('SIGKILL');
    await exited(child);
    expect(await pids.running()).toEqual([]);
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('stops leftovers, killing one that ignores SIGTERM, and leaves unrelated processes alone', async () => {
    const pids = new PidFiles(dir);
    const polite = start(['-e', 'setTimeout(() => {}, 60_000)', 'nodeagent/dist/main.js']);
    // Ignores SIGTERM for good, like the orphaned controllers whose etcd had gone.
    const stubborn = start([
      '-e',
      'process.on("SIGTERM", () => {}); console.log("ready"); setTimeout(() => {}, 60_000)',
      'controller/dist/main.js',
    ]);
    const bystander = start(['-e', 'setTimeout(() => {}, 60_000)', 'apiserver/dist/server.js']);
    await said(stubborn, 'ready');
    await pids.write('nodeagent', polite.pid!, 'nodeagent/dist/main.js');
    await pids.write('controller', stubborn.pid!, 'controller/dist/main.js');
    // The bystander's pid under a recorded start time that is not its own (a recycled pid).
    await fs.writeFile(
      path.join(dir, 'apiserver.pid'),
      JSON.stringify({ name: 'apiserver', marker: 'apiserver', pid: bystander.pid, started: 'x:1' }),
    );

    const t0 = Date.now();
    const stopped = await stopLeftovers(pids, dir, logger);
    expect(stopped.map((s) => s.name).sort()).toEqual(['controller', 'nodeagent']);
    await exited(polite);
    await exited(stubborn);
    expect(polite.signalCode).toBe('SIGTERM');
    expect(stubborn.signalCode).toBe('SIGKILL');
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
    expect(await fs.readdir(dir)).toEqual([]);
  }, 30_000);

  it('finds leftovers without pid files by their state dir in /proc, and touches nothing else', async () => {
    const stateDir = path.join(dir, 'state');
    const sleep = 'console.log("ready"); setTimeout(() => {}, 60_000)';
    const orphan = start(['-e', sleep, 'apiserver/dist/server.js'], { env: { VTL_STATE_DIR: stateDir } });
    const orphanEtcd = start(['-e', sleep, '--', `--data-dir=${stateDir}/etcd`], { argv0: '/usr/bin/etcd' });
    // Another appliance's apiserver, and a shell-like process that only exported the variable.
    const other = start(['-e', sleep, 'apiserver/dist/server.js'], {
      env: { VTL_STATE_DIR: path.join(dir, 'other') },
    });
    const shell = start(['-e', sleep, 'tool.js'], { env: { VTL_STATE_DIR: stateDir } });
    await Promise.all([orphan, orphanEtcd, other, shell].map((c) => said(c, 'ready')));

    const stopped = await stopLeftovers(new PidFiles(path.join(dir, 'run')), stateDir, logger);
    expect(stopped.map((s) => [s.name, s.pid]).sort()).toEqual(
      [
        ['apiserver', orphan.pid],
        ['etcd', orphanEtcd.pid],
      ].sort(),
    );
    await exited(orphan);
    await exited(orphanEtcd);
    expect(orphan.signalCode).toBe('SIGTERM');
    for (const bystander of [other, shell]) expect(bystander.exitCode ?? bystander.signalCode).toBeNull();
  }, 30_000);
});
