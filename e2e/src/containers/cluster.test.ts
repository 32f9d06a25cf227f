import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { ApiClient } from '../harness/api-client.js';
import { buildImage, ImageCluster, logLines, type Member } from './cluster.js';

/** The controller's leadership lease (controller/src/main.ts): a standby leads within 2 × this. */
const LEADER_TTL_MS = 5_000;

/**
 * The image's processes as containers (testcontainers, host networking, no Ryuk): a 3-member
 * etcd cluster over TLS, 2 apiservers and 2 controllers, each its own container of the one
 * image, as the chart runs them. Faults are injected into the containers.
 */
describe('the vtl image as a cluster of containers', () => {
  let cluster: ImageCluster;
  const api = (i: number) => new ApiClient(`https://127.0.0.1:${cluster.apiPorts[i]!.https}`);
  const login = async (i: number) => {
    const res = await api(i).request('POST', '/api/auth/login', {
      username: 'admin',
      password: cluster.adminPassword,
    });
    expect(res.status, res.text).toBe(200);
    return api(i).withToken(res.body.token);
  };

  beforeAll(async () => {
    const image = await buildImage();
    cluster = await ImageCluster.create(image);
    await cluster.startEtcd();
    // One after the other: ports are picked free at each start, and two picks at once could
    // hand out the same port.
    await cluster.startApiservers();
    await cluster.startControllers();
  }, 1_800_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  it('both apiservers serve, and the admin of the given password file logs in on either', async () => {
    for (const i of [0, 1]) {
      const health = await fetch(`http://127.0.0.1:${cluster.apiPorts[i]!.plain}/healthz`);
      expect(health.status).toBe(200);
    }
    const admin = await login(0);
    const created = await admin.request('POST', '/api/users', {
      username: 'operator',
      password: 'operator-password-1',
      role: 'read-only',
    });
    expect(created.status, created.text).toBe(201);
    const users = await (await login(1)).request('GET', '/api/users');
    expect(users.body.map((u: any) => u.username).sort()).toEqual(['admin', 'operator']);
    for (const port of cluster.controllerHealth) {
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    }
  });

  it('a node: the nodeagent container restarts and the emulator container keeps serving', async () => {
    const node = await cluster.startNode('node1');
    const admin = await login(0);
    await waitFor(
      async () => {
        const pools = await admin.request('GET', '/api/pools');
        return pools.body.some?.((p: any) => p.node === 'node1' && p.state === 'active');
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const started = async () =>
      (await logLines(cluster.member('node1-emulator'))).filter((l) => l.msg === 'emulator started');
    await waitFor(async () => (await started()).length === 1, { timeoutMs: 60_000, intervalMs: 500 });
    const iscsiOpen = () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(node.iscsiPort, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
      });
    await waitFor(iscsiOpen, { timeoutMs: 30_000, intervalMs: 250 });
    const held = net.connect(node.iscsiPort, '127.0.0.1');
    let closed = false;
    held.on('close', () => (closed = true));
    held.on('error', () => undefined);

    const agent = cluster.member('node1-agent');
    await agent.container.restart({ timeout: 5_000 });
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${node.healthPort}/readyz`).catch(() => undefined))?.status === 200,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    // The restarted nodeagent adopted the running emulator: no second start, and a host's
    // connection made before the restart is still open.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await started()).toHaveLength(1);
    expect(closed).toBe(false);
    held.destroy();
  });

  it('kill the leading controller: the standby leads within 2 x the lease TTL', async () => {
    const leads = async (m: Member) => (await logLines(m)).filter((l) => l.msg === 'controller leading');
    let leader: Member | undefined;
    await waitFor(
      async () => {
        for (const name of ['ctl0', 'ctl1'])
          if ((await leads(cluster.member(name))).length > 0) leader = cluster.member(name);
        return leader !== undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const standby = cluster.member(leader!.name === 'ctl0' ? 'ctl1' : 'ctl0');
    expect(await leads(standby)).toEqual([]);
    const killedAt = Date.now();
    // A crash, not a stop: SIGKILL (docker kill), so the lease is not given back and must run out.
    await promisify(execFile)('/usr/bin/docker', ['kill', '--signal', 'KILL', leader!.container.getId()]);
    let ledAt = 0;
    await waitFor(
      async () => {
        const [line] = await leads(standby);
        ledAt = line?.time ?? 0;
        return ledAt > 0;
      },
      { timeoutMs: 4 * LEADER_TTL_MS, intervalMs: 250 },
    ).catch(async (err: Error) => {
      const tail = async (m: Member) =>
        (await logLines(m))
          .slice(-4)
          .map((l) => JSON.stringify(l).slice(0, 300))
          .join('\n');
      throw new Error(
        `${err.message}\nleader ${leader!.name}:\n${await tail(leader!)}\nstandby:\n${await tail(standby)}`,
      );
    });
    expect(ledAt - killedAt).toBeLessThanOrEqual(2 * LEADER_TTL_MS);
    const port = cluster.controllerHealth[Number(standby.name.slice(3))]!;
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });

  it('stop one etcd member: the API keeps serving reads and writes', async () => {
    const etcd2 = cluster.member('etcd2');
    await etcd2.container.stop({ timeout: 5_000, remove: false });
    const admin = await login(1);
    const created = await admin.request('POST', '/api/users', {
      username: 'during-outage',
      password: 'outage-password-1',
      role: 'read-only',
    });
    expect(created.status, created.text).toBe(201);
    for (const i of [0, 1]) {
      const res = await fetch(`http://127.0.0.1:${cluster.apiPorts[i]!.plain}/healthz`);
      expect(res.status).toBe(200);
    }
    const users = await (await login(0)).request('GET', '/api/users');
    expect(users.body.map((u: any) => u.username).sort()).toEqual(['admin', 'during-outage', 'operator']);
  });
});
