import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import { pino } from 'pino';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { identify } from '@vtl/reconcile';
import { claimNode } from './node-claim.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const logger = pino({ level: 'silent' });
const pidns = await fs.readlink('/proc/self/ns/pid');

describe('one nodeagent per node (a leased claim in etcd)', () => {
  const t = useTestStore();

  it('waits while another live nodeagent holds the node, and takes it once that one lets go', async () => {
    const store = t.store;
    // The other nodeagent: a real process of this host, its claim under its own lease.
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const who = (await identify(other.pid!))!;
      const lease = await store.lease(10);
      await store.put(
        keys.nodeagentClaim('n1'),
        { pid: who.pid, host: os.hostname(), started: who.started, since: new Date().toISOString(), pidns },
        { lease },
      );
      let claimed = false;
      const claiming = claimNode(store, 'n1', logger).then((c) => ((claimed = true), c));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(claimed).toBe(false);

      await lease.revoke(); // the other one stops cleanly
      const claim = await claiming;
      const holder = (await store.get(keys.nodeagentClaim('n1'), z.any()))?.value;
      expect(holder.pid).toBe(process.pid);
      await claim.release();
      expect(await store.get(keys.nodeagentClaim('n1'), z.any())).toBeUndefined();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('takes over at once from a holder on this host that no longer runs (killed before its lease ran out)', async () => {
    const store = t.store;
    const dead = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => dead.once('exit', resolve));
    const who = (await identify(dead.pid!))!;
    dead.kill('SIGKILL');
    await exited;
    const lease = await store.lease(60);
    await store.put(
      keys.nodeagentClaim('n2'),
      { pid: who.pid, host: os.hostname(), started: who.started, since: new Date().toISOString(), pidns },
      { lease },
    );
    const t0 = Date.now();
    const claim = await claimNode(store, 'n2', logger);
    expect(Date.now() - t0).toBeLessThan(5_000);
    await claim.release();
    await lease.revoke();
  });

  it('keeps waiting while a holder on another host keeps its lease', async () => {
    const store = t.store;
    const lease = await store.lease(60);
    await store.put(
      keys.nodeagentClaim('n3'),
      { pid: 1, host: 'another-host', started: 'x:1', since: new Date().toISOString() },
      { lease },
    );
    const abort = new AbortController();
    const claiming = claimNode(store, 'n3', logger, abort.signal);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    abort.abort();
    await expect(claiming).rejects.toThrow();
    await lease.revoke();
  });
});
