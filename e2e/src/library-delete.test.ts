import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CartridgeSpec,
  DataplaneSpec,
  LibrarySpec,
  Op,
  PoolSpec,
  isOpFinished,
  isoNow,
  keys,
  type DeleteLibraryResponse,
} from '@vtl/api';
import { EventJournal, waitFor, type RenewingLease } from '@vtl/store';
import { startOpRunner } from '@vtl/reconcile';
import { deleteLibraryOp } from '@vtl/controller';
import { EmulatorSupervisor, NodeStatusPublisher, eraseLibraryOp } from '@vtl/nodeagent';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/**
 * Library delete as the controller runs it, with the nodeagent's op runner doing the node-local
 * erase (no emulator running: what is left is the directory and the records), on a real etcd.
 */
describe('library delete in the controller', () => {
  const t = useTestStore();
  let dir: string;
  let lease: RenewingLease;
  const stops: (() => Promise<void>)[] = [];
  const log = pino({ level: 'silent' });

  const library = (id: number, mediaDir: string) =>
    LibrarySpec.parse({
      id,
      name: `lib-${id}`,
      vendor: 'IBM',
      product: '3573-TL',
      variant: '',
      serial: `DEL${id}`,
      drive_model: 'ULT3580-TD8',
      drive_serials: [],
      num_drives: 1,
      num_slots: 5,
      num_ie: 1,
      label_prefix: 'DEL',
      media_dir: mediaDir,
      home_pool: id,
      created_at: isoNow(),
    });
  const run = async (library: number): Promise<Op> => {
    const id = await t.store.nextId('ops');
    await t.store.put(keys.ops.one(id), {
      id,
      kind: 'delete_library',
      executor: 'controller',
      params: { library },
      state: 'pending',
      steps: [],
      requested_by: 'test',
      created_at: isoNow(),
    } satisfies Op);
    return waitFor(
      async () => {
        const op = (await t.store.get(keys.ops.one(id), Op))?.value;
        return op && isOpFinished(op) ? op : undefined;
      },
      { timeoutMs: 30_000 },
    );
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-delete-'));
    const journal = new EventJournal(t.store);
    lease = await t.store.renewingLease(10);
    const supervisor = new EmulatorSupervisor({
      stateDir: dir,
      entry: '',
      logger: log,
      onEvent: () => undefined,
      onChange: () => undefined,
    });
    const publisher = new NodeStatusPublisher({ store: t.store, lease, node: 'n1', supervisor, logger: log });
    const controller = await startOpRunner({
      store: t.store,
      journal,
      executor: 'controller',
      logger: log,
      handlers: { delete_library: deleteLibraryOp({ store: t.store, journal }) },
    });
    const node = await startOpRunner({
      store: t.store,
      journal,
      executor: 'node:n1',
      logger: log,
      handlers: {
        erase_library: eraseLibraryOp({ supervisor, publisher }),
        reboot: async (op) => ({ ok: true, reason: op.params.reason }),
      },
    });
    stops.push(controller.stop, node.stop);
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await lease?.revoke().catch(() => undefined);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('erases the cartridges and the directory, drops the library from the data plane and deletes its records', async () => {
    const poolDir = path.join(dir, 'pool1');
    const mediaDir = path.join(poolDir, 'lib-1');
    await fs.mkdir(mediaDir, { recursive: true });
    await fs.writeFile(path.join(mediaDir, 'DEL001L8'), 'image');
    await t.store.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'p1', node: 'n1', path: poolDir, created_at: isoNow() }),
    );
    await t.store.put(keys.libraries.one(1), library(1, mediaDir));
    await t.store.put(keys.libraryStatus.one(1), { id: 1, state: 'active' });
    await t.store.put(keys.poolHome(1), { library: 1 });
    await t.store.put(keys.librarySerial('DEL1'), { library: 1 });
    await t.store.put(
      keys.dataplane,
      DataplaneSpec.parse({ generation: 4, libraries: [1, 9], requested_at: isoNow() }),
    );
    for (const label of ['DEL001L8', 'DEL002L8'])
      await t.store.put(
        keys.cartridges.one(label),
        CartridgeSpec.parse({ label, library: 1, home_slot: 1, created_at: isoNow() }),
      );

    const op = await run(1);
    expect(op.state, JSON.stringify(op.error)).toBe('succeeded');
    expect(op.result).toEqual({
      ok: true,
      library: 1,
      name: 'lib-1',
      cartridges_deleted: 2,
      skipped: [],
      rebooting: true,
    } satisfies DeleteLibraryResponse);
    expect(op.steps).toContain('The library was served: the appliance reboots now');
    await expect(fs.access(mediaDir)).rejects.toThrow();
    expect(await t.store.get(keys.libraries.one(1), LibrarySpec)).toBeUndefined();
    expect(await t.store.get(keys.libraryStatus.one(1), z.unknown())).toBeUndefined();
    expect(await t.store.get(keys.poolHome(1), z.unknown())).toBeUndefined();
    expect(await t.store.get(keys.librarySerial('DEL1'), z.unknown())).toBeUndefined();
    expect(await t.store.count(keys.cartridges.prefix)).toBe(0);
    // Only the deleted library leaves the data plane; its generation stays (nothing restarts for it).
    expect((await t.store.get(keys.dataplane, DataplaneSpec))?.value).toMatchObject({
      generation: 4,
      libraries: [9],
    });
    const events = (await t.store.list(keys.events.prefix, z.any())).items.map((i) => i.value);
    expect(
      events
        .filter((e) => e.kind === 'cart_deleted')
        .map((e) => e.subject)
        .sort(),
    ).toEqual(['DEL001L8', 'DEL002L8']);
    // The node did the erase and, after the answer, is asked to reboot, saying why.
    const ops = (await t.store.list(keys.ops.prefix, Op)).items.map((i) => i.value);
    expect(ops.find((o) => o.kind === 'erase_library')).toMatchObject({
      executor: 'node:n1',
      state: 'succeeded',
    });
    await waitFor(
      async () =>
        (await t.store.list(keys.ops.prefix, Op)).items.some(
          (i) =>
            i.value.kind === 'reboot' &&
            i.value.state === 'succeeded' &&
            i.value.params.reason === 'library 1 (lib-1) deleted',
        ),
      { timeoutMs: 10_000 },
    );

    // A retry (the op interrupted after its work) finds nothing left to do.
    const again = await run(1);
    expect(again.result).toMatchObject({ ok: true, library: 1, cartridges_deleted: 0, rebooting: false });
  });

  it('never removes a media directory outside the library pool, and does not reboot for a library never served', async () => {
    const poolDir = path.join(dir, 'pool2');
    const outside = path.join(dir, 'elsewhere');
    await fs.mkdir(poolDir, { recursive: true });
    await fs.mkdir(outside, { recursive: true });
    await t.store.put(
      keys.pools.one(2),
      PoolSpec.parse({ id: 2, name: 'p2', node: 'n1', path: poolDir, created_at: isoNow() }),
    );
    await t.store.put(keys.libraries.one(2), library(2, outside));
    const op = await run(2);
    expect(op.state).toBe('succeeded');
    expect(op.result).toMatchObject({ library: 2, rebooting: false });
    await fs.access(outside);
    expect(await t.store.get(keys.libraries.one(2), LibrarySpec)).toBeUndefined();
  });
});
