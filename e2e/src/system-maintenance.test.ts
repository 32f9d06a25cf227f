import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job, keys } from '@vtl/api';
import { Store } from '@vtl/store';
import { testJob } from '@vtl/store/testing';
import { waitFor } from '@vtl/reconcile';
import { extract } from 'tar-stream';
import { Appliance } from './harness/appliance.js';

const CONTROL_PLANE = ['apiserver/dist/server.js', 'controller/dist/main.js', 'nodeagent/dist/main.js'];
/** Short, so the abandoned-restart case finishes quickly; long enough for the drain checks. */
const DRAIN_TIMEOUT_MS = 8_000;

/**
 * Job rows as the job machinery would write them. Exports: the controller admits them from
 * `detected` only and leaves a queued one alone, while a queued import naming no remote is
 * failed at once ("remote 1 does not exist"), ending the drain this test is about.
 */
const job = (id: number, state: Job['state']): Job =>
  testJob({ id, kind: 'export', state, label: `SYS00${id}L7` });

/** Unpacks a tar.gz into name → text. */
async function untar(gz: Buffer): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => (files.set(header.name, Buffer.concat(chunks).toString('utf8')), next()));
  });
  const done = new Promise<void>((resolve, reject) => (ex.on('finish', resolve), ex.on('error', reject)));
  Readable.from([gunzipSync(gz)]).pipe(ex);
  await done;
  return files;
}

describe('control-plane restart, reboot and the support bundle (§3.5, §4.2)', () => {
  let app: Appliance;
  let store: Store;

  const pids = async () => Promise.all(CONTROL_PLANE.map((e) => app.childPid(e)));
  const emulatorPid = async () => (await app.emulatorPid()) ?? 0;
  const draining = async () => (await app.api.get('/api/system')).body.draining as boolean;
  /** Every control-plane process was replaced and the API answers again. */
  const restarted = async (before: Array<number | undefined>) =>
    waitFor(
      async () => {
        const now = await pids();
        if (now.some((p, i) => p === undefined || p === before[i])) return false;
        return (await app.api.get('/api/system').catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    ).catch((err) => {
      throw new Error(`${(err as Error).message}: ${before} -> restart not seen\n${app.logs}`);
    });

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS) } });
    store = await app.connectStore();
  });
  afterAll(async () => {
    await store?.close();
    await app?.destroy();
  });

  it('restarts only the control plane when no job is active; the emulator keeps running', async () => {
    // The emulator may still be starting right after boot.
    await waitFor(async () => (await emulatorPid()) > 0, { timeoutMs: 15_000, intervalMs: 200 });
    const before = await pids();
    const emulator = await emulatorPid();
    expect(before.every((p) => p !== undefined)).toBe(true);
    expect(emulator).toBeGreaterThan(0);

    const res = await app.api.post('/api/system/restart', { confirm: 'restart' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ok: true });
    await restarted(before);
    expect(await emulatorPid()).toBe(emulator);
  });

  it('drains while a job is queued, refuses disruptive calls, then restarts once it finished', async () => {
    await store.put(keys.jobs.one(1), job(1, 'queued'));
    const before = await pids();
    const res = await app.api.post('/api/system/restart', { confirm: 'restart', mode: 'graceful' });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ ok: true, draining: true, active_jobs: 1 });
    expect(await draining()).toBe(true);
    expect((await app.api.post('/api/system/dataplane-restart', { confirm: 'restart' })).status).toBe(409);
    expect((await app.api.post('/api/system/restart', { confirm: 'restart' })).status).toBe(400);
    expect(await pids()).toEqual(before);

    await store.put(keys.jobs.one(1), job(1, 'succeeded'));
    await restarted(before);
    expect(await draining()).toBe(false);
  });

  it('abandons a graceful restart after the drain limit and journals a system event', async () => {
    await store.put(keys.jobs.one(2), job(2, 'uploading'));
    const before = await pids();
    expect((await app.api.post('/api/system/restart', { confirm: 'restart' })).status).toBe(202);
    await waitFor(async () => !(await draining()), { timeoutMs: DRAIN_TIMEOUT_MS + 15_000, intervalMs: 250 });
    const events = (await app.api.get('/api/events/recent')).body as Array<Record<string, any>>;
    const abandoned = events.find((e) => e.kind === 'system' && e.subject === 'restart');
    expect(abandoned?.detail).toMatch(/abandoned after .* with 1 jobs still active/);
    expect(await pids()).toEqual(before);
    await store.put(keys.jobs.one(2), job(2, 'failed'));
  });

  it('restarts at once in mode immediate even with a job active', async () => {
    await store.put(keys.jobs.one(3), job(3, 'queued'));
    const before = await pids();
    const res = await app.api.post('/api/system/restart', { confirm: 'restart', mode: 'immediate' });
    expect(res.status, res.text).toBe(200);
    await restarted(before);
    expect(await draining()).toBe(false);
    await store.put(keys.jobs.one(3), job(3, 'cancelled'));
  });

  it('answers a reboot first, then the nodeagent asks its host to reboot', async () => {
    expect((await app.api.post('/api/system/reboot', { confirm: 'nope' })).status).toBe(400);
    const res = await app.api.post('/api/system/reboot', { confirm: 'reboot' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ok: true });
    await waitFor(async () => (await fs.readFile(app.rebootLog, 'utf8').catch(() => '')).trim() !== '', {
      timeoutMs: 15_000,
      intervalMs: 200,
    });
    const lines = (await fs.readFile(app.rebootLog, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1);
  });

  it('hands out a redacted support bundle and audits the download', async () => {
    const res = await app.api.get('/api/system/support-bundle');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    const system = (await app.api.get('/api/system')).body;
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="vtl-support-${system.system_name}-\\d{8}T\\d{6}Z\\.tar\\.gz"$`),
    );
    const files = await untar(res.raw);
    for (const name of [
      'status.json',
      'system.json',
      'settings.json',
      'events.json',
      'audit.json',
      'pools.json',
      'libraries.json',
      'nodes.json',
      'logs/apiserver.log',
      'logs/nodeagent.log',
    ])
      expect(files.has(name), name).toBe(true);
    expect(JSON.parse(files.get('system.json')!).system_uuid).toBe(system.system_uuid);
    const all = [...files.values()].join('\n');
    const password = (await fs.readFile(`${app.stateDir}/initial-admin-password`, 'utf8')).trim();
    expect(all).not.toContain(password);
    expect(all).not.toContain(app.api.token);
    expect(all).not.toMatch(/password_hash|scrypt\$|BEGIN [A-Z ]*PRIVATE KEY/);
    // logs/etcd.log is a log; the database (member/, *.db, *.wal) never goes in.
    expect([...files.keys()].filter((n) => /member\/|\.db$|\.wal$|\.key$|initial-admin/.test(n))).toEqual([]);

    const audit = (await app.api.get('/api/audit')).body.entries as Array<Record<string, any>>;
    expect(audit.some((e) => e.action === 'support.bundle' && e.outcome === 'ok')).toBe(true);
  });
});
