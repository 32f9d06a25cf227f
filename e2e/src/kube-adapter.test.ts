import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { waitFor } from '@vtl/reconcile';
import type { Store } from '@vtl/store';
import { testJob } from '@vtl/store/testing';
import { Appliance } from './harness/appliance.js';
import { condition, KubeAdapterRun, type Cr } from './harness/kube-adapter.js';

// The Kubernetes source: the adapter's real process (gitops/dist/kube/main.js) watches custom
// resources served by the TEST-ONLY kube-apiserver stand-in (gitops/src/kube/testing) and applies
// them to a real appliance. No real cluster is involved (docs/deploy.md: what was verified where).

const WAIT = { timeoutMs: 45_000, intervalMs: 250 };
const TEST_MS = 150_000;

describe('the Kubernetes adapter against the list/watch stand-in and a real appliance', () => {
  let app: Appliance;
  let kube: KubeAdapterRun;
  let dir: string;
  let poolPath: string;
  let store: Store;

  /** The core/v1 Events the adapter wrote about one resource, oldest first. */
  const events = async (kind: string, name: string) =>
    ((await kube.call('GET', '/api/v1/namespaces/backup/events')).body.items as any[]).filter(
      (e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name,
    );
  const event = (kind: string, name: string, reason: string) =>
    eventually(`event ${reason} of ${kind}/${name}`, async () =>
      (await events(kind, name)).find((e) => e.reason === reason),
    );

  const eventually = async <T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> => {
    let last: unknown;
    try {
      let value: T | undefined;
      await waitFor(async () => {
        const v = await fn();
        last = v;
        if (v === undefined || v === false) return false;
        value = v as T;
        return true;
      }, WAIT);
      return value as T;
    } catch {
      throw new Error(
        `${what}: last seen ${JSON.stringify(last)}\nadapter log:\n${kube.output.slice(-4000)}`,
      );
    }
  };
  const cr = (plural: string, name: string, test: (c: Cr) => boolean) =>
    eventually(`${plural}/${name}`, async () => {
      const c = await kube.get(plural, name);
      return c && test(c) ? c : undefined;
    });

  beforeAll(async () => {
    app = await Appliance.start();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-kube-'));
    poolPath = path.join(app.stateDir, 'pools', 'kube');
    kube = await KubeAdapterRun.start(app, dir);
    store = await app.connectStore();
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await kube?.stop();
    await app?.destroy();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it(
    'creates what the custom resources declare and reports Ready, Synced and observedGeneration',
    async () => {
      kube.kube.putSecret('backup', 'offsite-s3', { secretKey: 'not-a-real-secret-key-0123456789' });
      await kube.create('TapePool', 'tapepools', 'kube-pool', { path: poolPath });
      await kube.create('VirtualTapeLibrary', 'virtualtapelibraries', 'kube-lib', {
        product: '3573-TL',
        driveProduct: 'ULT3580-TD8',
        numDrives: 2,
        numSlots: 20,
        numMap: 4,
        labelPrefix: 'KUB',
        poolRef: 'kube-pool',
        activation: 'manual',
      });
      await kube.create('TapeInitiator', 'tapeinitiators', 'host-a', {
        wwpn: '21:00:00:24:ff:8a:0b:01',
        alias: 'backup-host-a',
      });
      await kube.create('TapeRemote', 'taperemotes', 'offsite', {
        endpoint: '127.0.0.1:9',
        region: '',
        bucket: 'vtl-kube',
        prefix: '',
        accessKey: 'AKIAKUBE',
        useSsl: false,
        pathStyle: true,
        secretRef: { name: 'offsite-s3', key: 'secretKey' },
      });

      const pool = await cr('tapepools', 'kube-pool', (c) => condition(c, 'Ready')?.status === 'True');
      expect(pool.metadata.finalizers).toContain('vtl.appliance.io/gitops');
      expect(pool.status).toMatchObject({ observedGeneration: 1, state: 'active', id: expect.any(Number) });
      expect(condition(pool, 'Synced')).toMatchObject({ status: 'True' });
      // Status went through the status subresource: the generation did not move.
      expect(pool.metadata.generation).toBe(1);

      const lib = await cr(
        'virtualtapelibraries',
        'kube-lib',
        (c) => condition(c, 'Synced')?.status === 'True',
      );
      expect(condition(lib, 'Ready')).toMatchObject({ status: 'False', reason: 'PendingActivation' });
      expect(lib.status).toMatchObject({
        state: 'pending_restart',
        serial: expect.any(String),
        observedGeneration: 1,
      });

      const init = await cr('tapeinitiators', 'host-a', (c) => condition(c, 'Synced')?.status === 'True');
      expect(init.status.registeredName).toBe('naa.21000024ff8a0b01');
      await cr('taperemotes', 'offsite', (c) => condition(c, 'Ready')?.status === 'True');

      // The appliance holds them, made by the source kubernetes-backup.
      const pools = (await app.api.get('/api/pools')).body;
      expect(pools.find((p: any) => p.name === 'kube-pool')).toMatchObject({
        path: poolPath,
        state: 'active',
      });
      const libraries = (await app.api.get('/api/libraries')).body;
      expect(libraries.find((l: any) => l.name === 'kube-lib')).toMatchObject({
        num_drives: 2,
        label_prefix: 'KUB',
      });
      const remotes = (await app.api.get('/api/remotes')).body;
      expect(remotes.find((r: any) => r.name === 'offsite')).toMatchObject({
        bucket: 'vtl-kube',
        has_secret: true,
      });
      const targets = (await app.api.get('/api/targets')).body;
      expect(targets.initiators.find((i: any) => i.wwpn === 'naa.21000024ff8a0b01')?.alias).toBe(
        'backup-host-a',
      );

      // The watch asked for bookmarks and got them.
      expect(
        kube.kube.requests.some((r) =>
          /watch=true.*allowWatchBookmarks=true|allowWatchBookmarks=true.*watch=true/.test(r),
        ),
      ).toBe(true);
      await eventually('a bookmark', async () => kube.kube.sent.bookmarks > 0);
    },
    TEST_MS,
  );

  it(
    'applies an edit of a mutable field and moves observedGeneration',
    async () => {
      const edited = await kube.editSpec(
        'tapeinitiators',
        'host-a',
        (s) => (s.alias = 'backup-host-renamed'),
      );
      expect(edited.metadata.generation).toBe(2);
      await eventually('alias on the appliance', async () => {
        const targets = (await app.api.get('/api/targets')).body;
        return (
          targets.initiators.find((i: any) => i.wwpn === 'naa.21000024ff8a0b01')?.alias ===
          'backup-host-renamed'
        );
      });
      await cr(
        'tapeinitiators',
        'host-a',
        (c) => c.status?.observedGeneration === 2 && condition(c, 'Synced')?.status === 'True',
      );
    },
    TEST_MS,
  );

  it(
    'refuses an immutable change with a condition that names the field, and changes nothing',
    async () => {
      // A real API server refuses this edit with the CRD's CEL rule; the stand-in does not run CEL,
      // so this is the adapter's second line: the engine refuses it and the status says why.
      await kube.editSpec('virtualtapelibraries', 'kube-lib', (s) => (s.numDrives = 3));
      const lib = await cr(
        'virtualtapelibraries',
        'kube-lib',
        (c) => condition(c, 'Synced')?.status === 'False',
      );
      expect(condition(lib, 'Synced')).toMatchObject({ reason: 'ImmutableFieldChanged' });
      expect(condition(lib, 'Synced')?.message).toMatch(/numDrives/);
      const libraries = (await app.api.get('/api/libraries')).body;
      expect(libraries.find((l: any) => l.name === 'kube-lib').num_drives).toBe(2);
      // `kubectl describe` shows it too: one Warning event, not one per resync.
      const refused = await event('VirtualTapeLibrary', 'kube-lib', 'ImmutableFieldChanged');
      expect(refused).toMatchObject({
        type: 'Warning',
        involvedObject: { apiVersion: 'vtl.appliance.io/v1alpha1', uid: lib.metadata.uid },
        message: expect.stringMatching(/numDrives/),
      });
      await new Promise((r) => setTimeout(r, 5_000)); // two resyncs
      expect(
        (await events('VirtualTapeLibrary', 'kube-lib')).filter((e) => e.reason === 'ImmutableFieldChanged'),
      ).toHaveLength(1);
      await kube.editSpec('virtualtapelibraries', 'kube-lib', (s) => (s.numDrives = 2));
      await cr('virtualtapelibraries', 'kube-lib', (c) => condition(c, 'Synced')?.status === 'True');
    },
    TEST_MS,
  );

  it(
    'puts back a REST edit of an owned object and says so in a DriftCorrected event',
    async () => {
      const wwpn = 'naa.21000024ff8a0b01';
      const edit = await app.api.put(`/api/targets/acls/${wwpn}`, { alias: 'edited-by-hand' });
      expect(edit.status, JSON.stringify(edit.body)).toBe(200);
      const drift = await event('TapeInitiator', 'host-a', 'DriftCorrected');
      expect(drift).toMatchObject({ type: 'Normal', message: expect.stringContaining('alias') });
      const targets = (await app.api.get('/api/targets')).body;
      expect(targets.initiators.find((i: any) => i.wwpn === wwpn)?.alias).toBe('backup-host-renamed');
    },
    TEST_MS,
  );

  it(
    'keeps the finalizer and says why while the appliance refuses a deletion, then lets go',
    async () => {
      // The pool homes a library: the appliance refuses to delete it (docs/api.md, Pools).
      await kube.delete('tapepools', 'kube-pool');
      const blocked = await cr(
        'tapepools',
        'kube-pool',
        (c) => condition(c, 'Ready')?.reason === 'DeletionBlocked',
      );
      expect(blocked.metadata.deletionTimestamp).toBeTruthy();
      expect(blocked.metadata.finalizers).toContain('vtl.appliance.io/gitops');
      expect(condition(blocked, 'Ready')?.message).toMatch(/librar/i);
      expect((await app.api.get('/api/pools')).body.some((p: any) => p.name === 'kube-pool')).toBe(true);

      // A job queued on the appliance (an export: the controller admits exports from detected only,
      // so it stays queued): the spec forbids deleting a library then (any job blocks it).
      const libId = (await app.api.get('/api/libraries')).body.find((l: any) => l.name === 'kube-lib').id;
      await store.put(
        keys.jobs.one(701),
        testJob({ id: 701, kind: 'export', state: 'queued', label: 'KUB001L8', library: libId }),
      );
      await kube.delete('virtualtapelibraries', 'kube-lib');
      const held = await cr(
        'virtualtapelibraries',
        'kube-lib',
        (c) => condition(c, 'Ready')?.reason === 'DeletionBlocked',
      );
      expect(held.metadata.deletionTimestamp).toBeTruthy();
      expect(held.metadata.finalizers).toContain('vtl.appliance.io/gitops');
      expect(condition(held, 'Ready')?.message).toMatch(
        /refused while 1 job\(s\) are active or queued \(export 701\)/,
      );
      expect((await event('VirtualTapeLibrary', 'kube-lib', 'DeletionBlocked')).message).toMatch(
        /export 701/,
      );
      expect((await app.api.get('/api/libraries')).body.some((l: any) => l.name === 'kube-lib')).toBe(true);

      // Once the job ended, the library (never activated: the spec's rules allow it) goes, the
      // finalizer is released, and the pool is freed and deleted as well.
      await store.put(
        keys.jobs.one(701),
        testJob({ id: 701, kind: 'export', state: 'succeeded', label: 'KUB001L8', library: libId }),
      );
      await eventually('library and pool deleted, resources gone', async () => {
        const [libs, pools] = [
          (await app.api.get('/api/libraries')).body,
          (await app.api.get('/api/pools')).body,
        ];
        return (
          !libs.some((l: any) => l.name === 'kube-lib') &&
          !pools.some((p: any) => p.name === 'kube-pool') &&
          !(await kube.get('virtualtapelibraries', 'kube-lib')) &&
          !(await kube.get('tapepools', 'kube-pool'))
        );
      });
      expect((await event('VirtualTapeLibrary', 'kube-lib', 'Pruned')).type).toBe('Normal');
    },
    TEST_MS,
  );

  it(
    'lists again after 410 Gone and converges on what changed meanwhile',
    async () => {
      const goneBefore = kube.kube.sent.gone;
      const listsBefore = kube.kube.requests.filter((r) => /^GET [^?]*\/tapeinitiators$/.test(r)).length;
      kube.kube.expireHistory();
      await kube.create('TapeInitiator', 'tapeinitiators', 'host-b', { wwpn: 'naa.21000024ff8a0b02' });
      await eventually('410 sent', async () => kube.kube.sent.gone > goneBefore);
      await cr('tapeinitiators', 'host-b', (c) => condition(c, 'Synced')?.status === 'True');
      expect(kube.kube.requests.filter((r) => /^GET [^?]*\/tapeinitiators$/.test(r)).length).toBeGreaterThan(
        listsBefore,
      );
      const targets = (await app.api.get('/api/targets')).body;
      expect(targets.initiators.map((i: any) => i.wwpn)).toContain('naa.21000024ff8a0b02');
    },
    TEST_MS,
  );
});
