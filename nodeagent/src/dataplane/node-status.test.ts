import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibrarySpec, NodeHeartbeat, NodeLibraryStatus, NodeRecord, PoolSpec, isoNow, keys } from '@vtl/api';
import { listNodeStatus } from '@vtl/domain';
import type { RenewingLease } from '@vtl/store';
import { freePort } from '@vtl/store/testing';
import { loadConfig } from '../config.js';
import { emulatorConfig } from './emulator-config.js';
import { EmulatorSupervisor } from './emulator-supervisor.js';
import { adoptRunningEmulator } from './dataplane-reconciler.js';
import { NODE_HEARTBEAT_INTERVAL_MS, NodeStatusPublisher } from './node-status.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const library = (id: number, poolDir: string) =>
  LibrarySpec.parse({
    id,
    name: `lib-${id}`,
    vendor: 'IBM',
    product: '3573-TL',
    variant: '',
    serial: `NS${id}`,
    drive_model: 'ULT3580-TD8',
    drive_serials: [`D${id}`],
    num_drives: 1,
    num_slots: 5,
    num_ie: 1,
    label_prefix: `AA${id}`,
    media_dir: path.join(poolDir, `lib-${id}`),
    home_pool: id,
    created_at: isoNow(),
  });

/**
 * The node status publisher with the real emulator and a real etcd: one small node record and
 * one record per library, each rewritten only when it changed.
 */
describe('the node status publisher', () => {
  const t = useTestStore();
  let stateDir: string;
  let supervisor: EmulatorSupervisor;
  let publisher: NodeStatusPublisher;
  let lease: RenewingLease;
  let want: (generation: number, libraries: number[]) => ReturnType<typeof emulatorConfig>;
  let config: ReturnType<typeof loadConfig>;

  const revisions = async () => {
    const store = t.store;
    const libs = await store.list(keys.nodeLibraryStatus.node('node1'), NodeLibraryStatus);
    const node = await store.get(keys.nodeStatus.one('node1'), NodeRecord);
    return {
      node: node?.modRevision,
      libs: Object.fromEntries(libs.items.map((i) => [i.value.id, i.modRevision])),
    };
  };

  beforeAll(async () => {
    const store = t.store;
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-node-status-'));
    config = loadConfig({
      VTL_STATE_DIR: stateDir,
      VTL_NODE: 'node1',
      VTL_ISCSI_PORT: String(await freePort()),
    });
    const pools = [1, 2].map((id) =>
      PoolSpec.parse({
        id,
        name: `p${id}`,
        node: 'node1',
        path: path.join(stateDir, `pool${id}`),
        created_at: isoNow(),
      }),
    );
    for (const p of pools) await fs.mkdir(p.path, { recursive: true });
    const libs = pools.map((p) => library(p.id, p.path));
    want = (generation, ids) =>
      emulatorConfig(config, { generation, libraries: ids, requested_at: isoNow() }, libs, pools);
    supervisor = new EmulatorSupervisor({
      stateDir,
      entry: config.emulatorEntry,
      logger: pino({ level: 'silent' }),
      onEvent: () => undefined,
      onChange: () => undefined,
    });
    await supervisor.ensure(want(1, [1, 2]));
    lease = await store.renewingLease(10);
    publisher = new NodeStatusPublisher({
      store,
      lease,
      node: 'node1',
      supervisor,
      logger: pino({ level: 'silent' }),
    });
    await publisher.publish();
  }, 120_000);
  afterAll(async () => {
    publisher?.stop();
    await supervisor?.stop();
    await lease?.revoke().catch(() => undefined);
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('publishes a node record and one record per library, read back as one node status', async () => {
    const store = t.store;
    const node = await store.get(keys.nodeStatus.one('node1'), NodeRecord);
    expect(node?.value.dataplane).toMatchObject({ state: 'running', generation: 1 });
    expect(node?.value).not.toHaveProperty('libraries');
    const [status] = await listNodeStatus(store);
    expect(status!.libraries.map((l) => [l.id, l.serial, l.drives.length])).toEqual([
      [1, 'NS1', 1],
      [2, 'NS2', 1],
    ]);
    expect(status!.cartridges).toEqual([]);
  });

  it('rewrites only the record of the library that changed', async () => {
    const before = await revisions();
    await supervisor.emulator!.mint({ library: 1, label: 'AA1001L8', slot: 1 });
    await publisher.publish();
    const after = await revisions();
    expect(after.libs[1]).not.toBe(before.libs[1]);
    expect(after.libs[2]).toBe(before.libs[2]);
    expect(after.node).toBe(before.node);
    const [status] = await listNodeStatus(t.store);
    expect(status!.cartridges.map((c) => [c.label, c.library])).toEqual([['AA1001L8', 1]]);

    // Nothing changed: nothing is written.
    await publisher.publish();
    expect(await revisions()).toEqual(after);
  });

  it('asks the emulator for what changed since its last answer and keeps what it saw while nothing did', async () => {
    const client = supervisor.emulator!;
    const answers: Awaited<ReturnType<typeof client.status>>[] = [];
    const status = client.status.bind(client);
    client.status = async (params) => {
      const answer = await status(params);
      answers.push(answer);
      return answer;
    };
    try {
      await publisher.publish();
      const seen = publisher.libraries;
      const records = await revisions();
      // Idle: the emulator sends no libraries and the publisher keeps (and writes) nothing new.
      await publisher.publish();
      expect(answers.at(-1)).toMatchObject({ unchanged: true, libraries: [] });
      expect(publisher.libraries).toBe(seen);
      expect(await revisions()).toEqual(records);

      await client.mint({ library: 2, label: 'AA2001L8', slot: 1 });
      await publisher.publish();
      expect(answers.at(-1)!.unchanged).toBeUndefined();
      expect(publisher.libraries.find((l) => l.id === 2)!.cartridges.map((c) => c.label)).toEqual([
        'AA2001L8',
      ]);
      const after = await revisions();
      expect(after.libs[2]).not.toBe(records.libs[2]);
      expect(after.libs[1]).toBe(records.libs[1]);
      const [published] = await listNodeStatus(t.store);
      expect(published!.cartridges.map((c) => [c.label, c.library])).toEqual([
        ['AA1001L8', 1],
        ['AA2001L8', 2],
      ]);
    } finally {
      client.status = status;
    }
  });

  it('deletes the record of a library the emulator no longer serves, with the new generation', async () => {
    await supervisor.ensure(want(2, [1]));
    await publisher.publish();
    const [status] = await listNodeStatus(t.store);
    expect(status!.dataplane.generation).toBe(2);
    expect(status!.libraries.map((l) => l.id)).toEqual([1]);
    expect(Object.keys((await revisions()).libs)).toEqual(['1']);
  }, 60_000);

  it('beats every interval though nothing changed, without rewriting the status records', async () => {
    const store = t.store;
    const beat = () => store.get(keys.nodeHeartbeat.one('node1'), NodeHeartbeat);
    await publisher.publish();
    const first = await beat();
    expect(first?.value).toMatchObject({ node: 'node1', interval_ms: NODE_HEARTBEAT_INTERVAL_MS });
    expect(first!.value.stale_after_ms).toBeGreaterThan(NODE_HEARTBEAT_INTERVAL_MS);
    const records = await revisions();
    // Within the interval a pass that changed nothing writes nothing, not even a beat.
    await publisher.publish();
    expect((await beat())?.modRevision).toBe(first?.modRevision);
    await new Promise((r) => setTimeout(r, NODE_HEARTBEAT_INTERVAL_MS + 100));
    await publisher.publish();
    const second = await beat();
    expect(BigInt(second!.modRevision)).toBeGreaterThan(BigInt(first!.modRevision));
    expect(await revisions()).toEqual(records);
  });

  it('leaves every record under its lease: they lapse together when the node is gone', async () => {
    await lease.revoke();
    expect(await listNodeStatus(t.store)).toEqual([]);
    expect(await t.store.count(keys.nodeLibraryStatus.prefix)).toBe(0);
    expect(await t.store.count(keys.nodeHeartbeat.prefix)).toBe(0);
  });

  /**
   * A control-plane restart (an update, a rollback) starts a new nodeagent beside the emulator
   * the last one left serving. Its first record once said "stopped (not started)" with no
   * libraries until the data-plane reconciler's first pass, and the API answered 503 for them
   * meanwhile (CI: a mint right after a rollback).
   */
  it('starts a nodeagent beside a running emulator with a first record that says it runs', async () => {
    const store = t.store;
    const generation = supervisor.status.generation;
    const pid = supervisor.status.pid;
    const desired = (g: number) =>
      store.put(keys.dataplane, { generation: g, libraries: [1], requested_at: isoNow() });
    const next = new EmulatorSupervisor({
      stateDir,
      entry: config.emulatorEntry,
      logger: pino({ level: 'silent' }),
      onEvent: () => undefined,
      onChange: () => undefined,
    });
    const nextLease = await store.renewingLease(10);
    const nextPublisher = new NodeStatusPublisher({
      store,
      lease: nextLease,
      node: 'node1',
      supervisor: next,
      logger: pino({ level: 'silent' }),
    });
    try {
      // As nodeagent/src/main.ts starts: the first look, then the first record.
      await desired(generation);
      expect(await adoptRunningEmulator({ store, config, supervisor: next })).toBe(true);
      await nextPublisher.start();
      const [status] = await listNodeStatus(store);
      expect(status!.dataplane).toMatchObject({ state: 'running', generation, pid });
      expect(status!.libraries.map((l) => l.id)).toEqual([1]);
      expect(next.emulator).toBeDefined();

      // Another generation wanted: not adopted, and not "stopped" either; ensure() restarts it.
      const other = new EmulatorSupervisor({
        stateDir,
        entry: config.emulatorEntry,
        logger: pino({ level: 'silent' }),
        onEvent: () => undefined,
        onChange: () => undefined,
      });
      await desired(generation + 1);
      expect(await adoptRunningEmulator({ store, config, supervisor: other })).toBe(false);
      expect(other.status).toMatchObject({ state: 'starting', generation, pid });
      expect(other.emulator).toBeUndefined();
      expect(supervisor.emulator).toBeDefined();
      expect(await supervisor.emulator!.hello()).toMatchObject({ pid, generation });
    } finally {
      nextPublisher.stop();
      next.detach();
      await nextLease.revoke().catch(() => undefined);
      await store.delete(keys.dataplane).catch(() => undefined);
    }
  });
});
