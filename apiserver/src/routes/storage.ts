import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import {
  AddStorageDeviceRequest,
  DEFAULT_DEDUP_SCHEDULE,
  DedupScheduleRequest,
  SetupStorageRequest,
  StorageSpec,
  StorageView,
  VtlError,
  badRequest,
  conflict,
  isoNow,
  keys,
  notFound,
} from '@vtl/api';
import { waitFor } from '@vtl/reconcile';
import { createStorage, loadSnapshot, markStorageDeleting, replaceStorage } from '@vtl/domain';
import type { AppContext } from '../context.js';
import { runRemoteOp } from '../services/remote-ops.js';
import { requestNode, storageView } from '../services/storage.js';

/** How long the node has to check the devices on its own disks. */
const DEVICE_CHECK_WAIT_MS = 30_000;
/** How long a request waits for the node to make, grow or tear down the filesystem. */
const STORAGE_WAIT_MS = 120_000;

const NodeQuery = z.strictObject({ node: z.string().min(1).max(63).optional() });

/**
 * Shared system storage (docs/storage.md): the apiserver writes what the storage should be
 * (`spec/storage/<node>`) after the node checked the devices; the node's nodeagent makes,
 * mounts, grows and tears down the filesystem and reports it (`status/storage/<node>`).
 */
export async function storageRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const upNodes = async () => (await loadSnapshot(ctx.store)).nodes.map((n) => n.node);
  const checkDevices = (node: string, devices: string[], force: boolean, requestedBy: string) =>
    runRemoteOp(ctx.store, {
      kind: 'storage_device_check',
      executor: `node:${node}`,
      params: { devices, force },
      requestedBy,
      waitMs: DEVICE_CHECK_WAIT_MS,
    });
  /** Waits for the node's report to satisfy `done`, then answers the view as it is. */
  const settle = async (node: string, done: (v: StorageView | undefined) => boolean) => {
    await waitFor(async () => done(await storageView(ctx, node)), {
      timeoutMs: STORAGE_WAIT_MS,
      intervalMs: 250,
    }).catch(() => undefined);
    return storageView(ctx, node);
  };
  const spanned = (v: StorageView | undefined, device: string) =>
    v?.status?.state === 'error' ||
    Boolean(
      v?.status?.devices.length && v.devices.includes(device) && v.status.devices.length >= v.devices.length,
    );

  r.get(
    '/api/storage',
    {
      schema: { response: { 200: z.array(StorageView) } },
      config: { role: 'read-only', doc: { summary: 'The shared storage of every node' } },
    },
    async () => {
      const specs = (await ctx.store.list(keys.storage.prefix, StorageSpec)).items;
      const views = await Promise.all(specs.map((s) => storageView(ctx, s.value.node)));
      return views.filter((v): v is StorageView => v !== undefined);
    },
  );

  r.post(
    '/api/storage',
    {
      schema: { body: SetupStorageRequest, response: { 200: StorageView, 201: StorageView } },
      config: {
        role: 'admin',
        action: 'storage.setup',
        doc: { summary: 'Set up shared storage (btrfs) on named block devices of a node', status: 201 },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const node = requestNode(await upNodes(), body.node);
      request.auditSubject = node;
      const existing = await storageView(ctx, node);
      if (existing) {
        if (JSON.stringify(existing.devices) === JSON.stringify(body.devices) && !existing.deleting)
          return existing;
        throw conflict(
          `Node ${node} has shared storage already (${existing.devices.join(', ')}); POST /api/storage/devices adds a device.`,
        );
      }
      await checkDevices(node, body.devices, body.force === true, request.principal?.name ?? '');
      const spec: StorageSpec = {
        node,
        devices: body.devices,
        force: body.force ? body.devices : [],
        dedup: body.dedup ?? DEFAULT_DEDUP_SCHEDULE,
        created_at: isoNow(),
      };
      if (!(await createStorage(ctx.store, spec))) throw conflict(`Node ${node} has shared storage already.`);
      const view = await settle(node, (v) => v?.status?.state === 'ready' || v?.status?.state === 'error');
      reply.status(201);
      return view;
    },
  );

  /** A node's storage spec, or 404 when it has none (or it is being torn down). */
  const existingStorage = async (node: string) => {
    const got = await ctx.store.get(keys.storage.one(node), StorageSpec);
    if (!got || got.value.deleting)
      throw notFound(`Node ${node} has no shared storage; POST /api/storage sets it up.`);
    return got;
  };

  r.post(
    '/api/storage/devices',
    {
      schema: { body: AddStorageDeviceRequest, response: { 200: StorageView } },
      config: {
        role: 'admin',
        action: 'storage.grow',
        doc: { summary: 'Add a block device to a node’s shared storage' },
      },
    },
    async (request) => {
      const body = request.body;
      const node = requestNode(await upNodes(), body.node);
      request.auditSubject = `${node}:${body.device}`;
      const got = await existingStorage(node);
      if (!got.value.devices.includes(body.device)) {
        await checkDevices(node, [body.device], body.force === true, request.principal?.name ?? '');
        const spec: StorageSpec = {
          ...got.value,
          devices: [...got.value.devices, body.device],
          force: body.force ? [...got.value.force, body.device] : got.value.force,
        };
        await replaceStorage(ctx.store, got, spec);
      }
      return settle(node, (v) => spanned(v, body.device));
    },
  );

  r.put(
    '/api/storage/dedup',
    {
      schema: { body: DedupScheduleRequest, response: { 200: StorageView } },
      config: {
        role: 'admin',
        action: 'storage.dedup',
        doc: { summary: 'Set the dedup pass’s interval, or pause and resume it' },
      },
    },
    async (request) => {
      const body = request.body;
      const node = requestNode(await upNodes(), body.node);
      request.auditSubject = node;
      const got = await existingStorage(node);
      const spec: StorageSpec = {
        ...got.value,
        dedup: {
          interval_minutes: body.interval_minutes ?? got.value.dedup.interval_minutes,
          paused: body.paused ?? got.value.dedup.paused,
        },
        // Milliseconds, as the pass's start: a second's resolution lost a request made in the same
        // second as the last pass started (it compared equal and no pass ran).
        ...(body.run_now ? { dedup_requested_at: new Date().toISOString() } : {}),
      };
      await replaceStorage(ctx.store, got, spec);
      return (await storageView(ctx, node)) as StorageView;
    },
  );

  r.delete(
    '/api/storage',
    {
      schema: { querystring: NodeQuery },
      config: {
        role: 'admin',
        action: 'storage.teardown',
        doc: { summary: 'Tear down a node’s shared storage once no pool is on it (wipes its devices)' },
      },
    },
    async (request) => {
      const s = await loadSnapshot(ctx.store);
      const node = requestNode(
        s.nodes.map((n) => n.node),
        request.query.node,
      );
      request.auditSubject = node;
      const got = await ctx.store.get(keys.storage.one(node), StorageSpec);
      if (!got) throw notFound(`Node ${node} has no shared storage.`);
      const left = s.pools.filter((p) => p.node === node && p.engine === 'btrfs');
      if (left.length > 0)
        throw badRequest(
          `Pools ${left.map((p) => `"${p.name}"`).join(', ')} are on the shared storage of node ${node}; delete them first.`,
        );
      await markStorageDeleting(ctx.store, got);
      const gone = await waitFor(async () => !(await ctx.store.get(keys.storage.one(node), StorageSpec)), {
        timeoutMs: STORAGE_WAIT_MS,
        intervalMs: 250,
      }).then(
        () => true,
        () => false,
      );
      if (!gone)
        throw new VtlError(
          'timeout',
          `Node ${node} is still tearing its storage down; GET /api/storage shows how far it is.`,
        );
      return { ok: true, node, devices: got.value.devices };
    },
  );
}
