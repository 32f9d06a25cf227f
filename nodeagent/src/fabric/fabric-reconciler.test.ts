import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibrarySpec, PoolSpec, isoNow, keys, type NodeFabricStatus } from '@vtl/api';
import { EventJournal, waitFor } from '@vtl/store';
import { freePort } from '@vtl/store/testing';
import { loadConfig } from '../config.js';
import { emulatorConfig } from '../dataplane/emulator-config.js';
import { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import { startFabricReconciler } from './fabric-reconciler.js';
import { LioFcDriver } from './lio-driver.js';
import { KernelTree } from './testing/kernel-tree.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const PORT1 = 'naa.21000024ff000001';
const HOST_A = 'naa.10000000c9aaaaaa';
const ISCSI_HOST = 'iqn.2026-11.test.fabric:host';

/**
 * The fabric reconciler as the nodeagent runs it: a real etcd holding the registry, the real
 * emulator serving one library, and the LIO driver on a kernel-like configfs tree with one FC
 * port. What it reports is what GET /api/targets shows.
 */
describe('the fabric reconciler', () => {
  const t = useTestStore();
  let tree: KernelTree;
  let stateDir: string;
  let supervisor: EmulatorSupervisor;
  let fabric: { resync(): void; stop(): Promise<void> };
  let reported: NodeFabricStatus | undefined;

  beforeAll(async () => {
    const store = t.store;
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-fabric-'));
    tree = await KernelTree.create();
    tree.start();
    await tree.addHostPort('host1', PORT1);

    const poolDir = path.join(stateDir, 'pool');
    await fs.mkdir(poolDir, { recursive: true });
    const pool = PoolSpec.parse({ id: 1, name: 'p', node: 'node1', path: poolDir, created_at: isoNow() });
    const lib = LibrarySpec.parse({
      id: 1,
      name: 'lib-1',
      vendor: 'IBM',
      product: '3573-TL',
      variant: '',
      serial: 'FABRIC1',
      drive_model: 'ULT3580-TD8',
      drive_serials: ['D1'],
      num_drives: 1,
      num_slots: 5,
      num_ie: 1,
      label_prefix: 'FAB',
      media_dir: path.join(poolDir, 'lib-1'),
      home_pool: 1,
      created_at: isoNow(),
    });
    const config = loadConfig({
      VTL_STATE_DIR: stateDir,
      VTL_NODE: 'node1',
      VTL_ISCSI_PORT: String(await freePort()),
    });
    supervisor = new EmulatorSupervisor({
      stateDir,
      entry: config.emulatorEntry,
      logger: pino({ level: 'silent' }),
      onEvent: () => undefined,
      onChange: () => undefined,
    });
    await supervisor.ensure(
      emulatorConfig(config, { generation: 1, libraries: [1], requested_at: isoNow() }, [lib], [pool]),
    );
    expect(supervisor.status.state).toBe('running');

    fabric = await startFabricReconciler({
      store,
      journal: new EventJournal(store),
      node: 'node1',
      supervisor,
      driver: new LioFcDriver(tree.configfsRoot, tree.sysfsRoot),
      logger: pino({ level: 'silent' }),
      report: (s) => (reported = structuredClone(s)),
    });
  }, 120_000);
  afterAll(async () => {
    await fabric?.stop();
    await supervisor?.stop();
    await tree?.destroy();
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('builds the FC target for the emulator generation and verifies it', async () => {
    await waitFor(() => reported?.fc.verified === true, { timeoutMs: 20_000 });
    expect(reported!.fc).toMatchObject({ no_hba: false, generation: 1, acls: [] });
    // The changer and the one drive, as LUN 0 and 1.
    expect(reported!.fc.luns.map((l) => [l.lun, l.library])).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(reported!.fc.ports).toEqual([
      expect.objectContaining({ wwpn: PORT1, serving: true, built: true }),
    ]);
    // The change of FC state is recorded as an event for the console and the event stream.
    await waitFor(
      async () =>
        (await t.store.list(keys.events.prefix, z.any())).items.some(
          (e) => e.value.kind === 'fc_state' && e.value.subject === 'node1',
        ),
      { timeoutMs: 10_000 },
    );
  });

  it('applies a registered FC initiator live, mapped to the libraries it may see', async () => {
    const store = t.store;
    const revision = await store.put(keys.initiators.one(HOST_A), {
      wwpn: HOST_A,
      alias: 'host a',
      fabric: 'fc',
      ports: '',
      libraries: '',
      created_at: isoNow(),
    });
    await waitFor(() => reported && BigInt(reported.registry_revision || '0') >= BigInt(revision), {
      timeoutMs: 20_000,
    });
    expect(reported!.error).toBe('');
    expect(reported!.fc.acls.map((a) => [a.port, a.wwpn, a.mapped_luns])).toEqual([[PORT1, HOST_A, [0, 1]]]);
  });

  it('pushes a registered iSCSI initiator to the emulator with the libraries it may see', async () => {
    const store = t.store;
    await store.put(keys.initiators.one(ISCSI_HOST), {
      wwpn: ISCSI_HOST,
      alias: 'iscsi host',
      fabric: 'iscsi',
      ports: '',
      libraries: '1',
      created_at: isoNow(),
    });
    await waitFor(() => reported?.iscsi_access.some((a) => a.name === ISCSI_HOST), { timeoutMs: 20_000 });
    expect(reported!.iscsi_access).toContainEqual({ name: ISCSI_HOST, libraries: [1] });
  });

  it('stops serving a port listed in fc.disabled_ports', async () => {
    await t.store.put(keys.settings, { 'fc.disabled_ports': PORT1 });
    await waitFor(() => reported?.fc.ports[0]?.serving === false, { timeoutMs: 20_000 });
  });
});
