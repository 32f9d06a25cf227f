import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job, Op, isJobActive, keys } from '@vtl/api';
import { Store } from '@vtl/store';
import { freePort, testJob } from '@vtl/store/testing';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';
import { burst, refusalCodes, startSilentServer, times, unreachableRemote } from './harness/race.js';
import type { ApiResponse } from './harness/api-client.js';

const N = 10;

/**
 * Concurrency harness (issue 13 item 1): N identical and N conflicting requests fired at once
 * at each write endpoint of the real appliance. Exactly one wins, the others get the documented
 * refusal, and the records are consistent afterwards.
 */
describe('racing writes: exactly one wins', () => {
  let app: Appliance;
  let store: Store;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let libId: number;
  let remoteId: number;
  let refusingId: number;
  const labels: string[] = [];

  const jobsOf = async (label: string): Promise<Job[]> =>
    (await app.api.get(`/api/jobs?label=${label}`)).body as Job[];

  beforeAll(async () => {
    silent = await startSilentServer();
    app = await Appliance.start();
    store = await app.connectStore();
    const pool = (await app.api.get('/api/pools')).body[0];
    const lib = await app.api.post('/api/libraries', {
      name: 'races',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 12,
      num_map: 1,
      label_prefix: 'RAC',
      pool_id: pool.id,
    });
    expect(lib.status, lib.text).toBe(201);
    libId = lib.body.library;
    await app.apply();
    const mint = await app.api.post('/api/cartridges', { library: libId, count: 7 });
    expect(mint.status, mint.text).toBe(200);
    labels.push(...mint.body.created.map((c: { label: string }) => c.label));
    // An S3 endpoint that never answers: jobs sent there stay in flight while the test looks.
    const remote = await app.api.post('/api/remotes', unreachableRemote('silent', silent.port));
    expect(remote.status, remote.text).toBe(201);
    remoteId = remote.body.id;
    // A closed port: jobs sent there fail soon, so no job stays active between the apply races.
    const refusing = await app.api.post('/api/remotes', unreachableRemote('refusing', await freePort()));
    expect(refusing.status, refusing.text).toBe(201);
    refusingId = refusing.body.id;
  }, 300_000);
  afterAll(async () => {
    await store?.close();
    await app?.destroy();
    await silent?.close();
  });

  /**
   * An operation that needs every job stopped, fired amid N exports of one label (run before
   * any test leaves a job in flight). Either an export was active when the operation checked and
   * it is refused with 400 naming it, or it ran and no export admitted was active while it did
   * (store revisions); exports during it are 409.
   */
  async function raceWithExports(kind: Op['kind'], call: () => Promise<ApiResponse>): Promise<void> {
    await waitFor(
      async () => ((await app.api.get('/api/jobs')).body as Job[]).every((j) => !isJobActive(j.state)),
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );
    const label = labels[6]!;
    const exports = times(N, () =>
      app.api.post(`/api/cartridges/${label}/export`, { remote_id: refusingId }),
    );
    const b = await burst([...exports.slice(0, N / 2), call, ...exports.slice(N / 2)]);
    const opAnswer = b.responses[N / 2]!;
    const exportAnswers = b.responses.filter((_, i) => i !== N / 2);
    const admitted = exportAnswers.filter((r) => r.status === 201).map((r) => (r.body as Job).id);
    for (const r of exportAnswers.filter((x) => x.status !== 201))
      expect([400, 409], r.text).toContain(r.status);
    if (opAnswer.status === 400) {
      // Refused for jobs of this burst that were active when it checked.
      const details = (opAnswer.body as { error: { details?: { jobs?: number[] } } }).error.details;
      expect(details?.jobs ?? [], opAnswer.text).not.toHaveLength(0);
      expect(admitted).toEqual(expect.arrayContaining(details!.jobs!));
      return;
    }
    expect(opAnswer.status, opAnswer.text).toBe(200);
    const ops = (await store.list(keys.ops.prefix, Op)).items.filter((o) => o.value.kind === kind);
    const op = ops.at(-1)!;
    expect(op.value.state).toBe('succeeded');
    // The refusing remote fails a job within moments, so the label frees up and several exports
    // of the burst may be admitted one after the other: each must lie wholly before the
    // operation (finished before it was recorded) or wholly after it (created once it ended).
    for (const id of admitted) {
      const row = (await store.get(keys.jobs.one(id), Job))!;
      const before = !isJobActive(row.value.state) && BigInt(row.modRevision) < BigInt(op.createRevision);
      const after = BigInt(row.createRevision) > BigInt(op.modRevision);
      expect(
        before || after,
        `job ${id} (revisions ${row.createRevision}..${row.modRevision}, ${row.value.state}) overlaps ${kind} (${op.createRevision}..${op.modRevision})`,
      ).toBe(true);
    }
  }

  it(`an apply amid ${N} exports: no job is admitted between its check and its end`, async () => {
    await raceWithExports('apply', () => app.api.post('/api/libraries/apply', { confirm: 'apply' }));
  });

  it(`a library delete amid ${N} exports: no job is admitted between its check and its end`, async () => {
    const pool = await app.api.post('/api/pools', { name: 'doomed', path: `${app.stateDir}/pools/doomed` });
    expect([200, 201], pool.text).toContain(pool.status);
    await waitFor(
      async () =>
        ((await app.api.get('/api/pools')).body as Array<{ name: string; state: string }>).some(
          (p) => p.name === 'doomed' && p.state === 'active',
        ),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const lib = await app.api.post('/api/libraries', {
      name: 'doomed',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 12,
      num_map: 1,
      label_prefix: 'DOM',
      pool_id: pool.body.id,
    });
    expect(lib.status, lib.text).toBe(201);
    await raceWithExports('delete_library', () =>
      app.api.delete(`/api/libraries/${lib.body.library}`, {
        confirm: 'doomed',
        acknowledge: 'I understand',
      }),
    );
  });

  it(`${N} exports of one cartridge: one 201, ${N - 1} × 409, one job`, async () => {
    const label = labels[0]!;
    const b = await burst(
      times(N, () => app.api.post(`/api/cartridges/${label}/export`, { remote_id: remoteId })),
    );
    expect(b.statuses, JSON.stringify(b.statuses)).toEqual({ 201: 1, 409: N - 1 });
    expect(new Set(refusalCodes(b))).toEqual(new Set(['conflict']));
    const jobs = await jobsOf(label);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.id).toBe((b.wins[0]!.body as Job).id);
  });

  it(`${N} exports and ${N} deletes of one cartridge at once: exactly one of them wins`, async () => {
    const label = labels[1]!;
    const calls = [
      ...times(N, () => app.api.post(`/api/cartridges/${label}/export`, { remote_id: remoteId })),
      ...times(N, () => app.api.delete(`/api/cartridges/${label}`, { confirm: label })),
    ];
    // Interleave, so neither kind is always first on the wire.
    const mixed = calls.map((c, i) => calls[(i % 2) * N + Math.floor(i / 2)]!);
    expect(mixed).toHaveLength(2 * N);
    const b = await burst(mixed);
    expect(b.wins, JSON.stringify(b.statuses)).toHaveLength(1);
    const won = b.wins[0]!;
    const jobs = await jobsOf(label);
    if (won.status === 201) {
      // The export won: the cartridge stays, with its one job; deletes were refused.
      expect(jobs).toHaveLength(1);
      expect((await app.api.get(`/api/cartridges/${label}`)).status).toBe(200);
      for (const r of b.responses.filter((r) => r !== won)) expect([400, 409]).toContain(r.status);
    } else {
      // The delete won: no job was created and the cartridge is gone.
      expect(won.status).toBe(200);
      expect(jobs).toHaveLength(0);
      expect((await app.api.get(`/api/cartridges/${label}`)).status).toBe(404);
      for (const r of b.responses.filter((r) => r !== won)) expect([404, 409]).toContain(r.status);
    }
  });

  it(`${N} deletes of one cartridge: one 200, the rest 409 or 404; it is gone`, async () => {
    const label = labels[2]!;
    const b = await burst(times(N, () => app.api.delete(`/api/cartridges/${label}`, { confirm: label })));
    expect(b.wins, JSON.stringify(b.statuses)).toHaveLength(1);
    expect(b.wins[0]!.status).toBe(200);
    for (const r of b.responses.filter((r) => r.status !== 200)) expect([404, 409]).toContain(r.status);
    expect((await app.api.get(`/api/cartridges/${label}`)).status).toBe(404);
  });

  it('20 retries of a failed job: one 200, 19 × 409, attempts 1 → 2', async () => {
    const label = labels[3]!;
    const id = 9_001;
    // A job the nodeagent can really run: its retry then stays in flight against the silent
    // remote instead of failing again at once, so a late request of the burst cannot meet a
    // second failure and win a second, legitimate retry.
    const system = (await app.api.get('/api/system')).body.system_name as string;
    const serial = (await app.api.get('/api/libraries')).body.find((l: { id: number }) => l.id === libId)
      .serial as string;
    await store.put(
      keys.jobs.one(id),
      testJob({
        id,
        kind: 'export',
        state: 'failed',
        label,
        library: libId,
        remote_id: remoteId,
        attempts: 1,
        system_name: system,
        library_serial: serial,
      }),
    );
    const b = await burst(times(20, () => app.api.post(`/api/jobs/${id}/retry`, {})));
    const why = JSON.stringify({
      statuses: b.statuses,
      wins: b.wins.map((r) => r.body),
      job: (await app.api.get(`/api/jobs/${id}`)).body,
    });
    expect(b.statuses, why).toEqual({ 200: 1, 409: 19 });
    expect((b.wins[0]!.body as Job).attempts).toBe(2);
    // Whatever the controller does with the new attempt meanwhile, it stays attempt 2.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await app.api.get(`/api/jobs/${id}`)).body.attempts).toBe(2);
  });

  it('a retry is refused while another job holds the label', async () => {
    const label = labels[0]!; // its export from the first test is still in flight
    const id = 9_002;
    await store.put(
      keys.jobs.one(id),
      testJob({ id, kind: 'export', state: 'interrupted', label, library: libId, remote_id: remoteId }),
    );
    const b = await burst(times(N, () => app.api.post(`/api/jobs/${id}/retry`, {})));
    expect(b.statuses, JSON.stringify(b.statuses)).toEqual({ 409: N });
    expect((await app.api.get(`/api/jobs/${id}`)).body.state).toBe('interrupted');
  });

  it(`${N} cancels of one job: one 200, ${N - 1} × 409`, async () => {
    const id = 9_003;
    await store.put(
      keys.jobs.one(id),
      testJob({
        id,
        kind: 'import',
        state: 'interrupted',
        label: 'RAC900L8',
        library: libId,
        remote_id: remoteId,
      }),
    );
    const b = await burst(times(N, () => app.api.post(`/api/jobs/${id}/cancel`, {})));
    expect(b.statuses, JSON.stringify(b.statuses)).toEqual({ 200: 1, 409: N - 1 });
    expect((await app.api.get(`/api/jobs/${id}`)).body.state).toBe('cancelled');
  });

  it(`${N} mints of one label: one 200, the rest refused; one cartridge`, async () => {
    const b = await burst(
      times(N, () => app.api.post('/api/cartridges', { library: libId, label: 'RAC500L8' })),
    );
    expect(b.wins, JSON.stringify(b.statuses)).toHaveLength(1);
    for (const r of b.responses.filter((r) => r.status !== 200)) expect([400, 409]).toContain(r.status);
    const carts = (await app.api.get('/api/cartridges')).body.filter(
      (c: { label: string }) => c.label === 'RAC500L8',
    );
    expect(carts).toHaveLength(1);
  });

  it('exports to a remote and deletes of that remote at once: never a job without its remote', async () => {
    const label = labels[4]!;
    const other = await app.api.post('/api/remotes', unreachableRemote('doomed', silent.port, 'b2'));
    expect(other.status, other.text).toBe(201);
    const id = other.body.id;
    const calls = [
      ...times(N, () => app.api.post(`/api/cartridges/${label}/export`, { remote_id: id })),
      ...times(N, () => app.api.delete(`/api/remotes/${id}`)),
    ];
    const b = await burst(calls.map((c, i) => calls[(i % 2) * N + Math.floor(i / 2)]!));
    const exported = b.responses.filter((r) => r.status === 201);
    expect(exported.length, JSON.stringify(b.statuses)).toBeLessThanOrEqual(1);
    const remoteLeft = (await app.api.get(`/api/remotes/${id}`)).status;
    const jobs = (await jobsOf(label)).filter((j) => j.remote_id === id);
    expect(jobs).toHaveLength(exported.length);
    // A job for the remote exists exactly when the remote does: the delete waited or was refused.
    if (jobs.length === 1) expect(remoteLeft).toBe(200);
    else expect(remoteLeft).toBe(404);
    for (const r of b.responses) expect([200, 201, 400, 404, 409]).toContain(r.status);
  });

  it(
    `${N} loads into one drive, then ${N} unloads: one 200 each, the rest 400`,
    { timeout: 90_000 },
    async () => {
      const label = labels[5]!;
      const loads = await burst(
        times(N, () => app.api.post(`/api/libraries/${libId}/drives/0/load`, { label })),
      );
      expect(loads.statuses, loads.responses.map((r) => r.text).join('\n')).toEqual({ 200: 1, 400: N - 1 });
      // The drive refuses to give up media within 15 s of activity (the load counts).
      await new Promise((r) => setTimeout(r, 16_000));
      const unloads = await burst(
        times(N, () => app.api.post(`/api/libraries/${libId}/drives/0/unload`, {})),
      );
      expect(unloads.statuses, unloads.responses.map((r) => r.text).join('\n')).toEqual({
        200: 1,
        400: N - 1,
      });
    },
  );

  it(`${N} creates of one user: one 201, ${N - 1} × 409`, async () => {
    const body = { username: 'racer', password: 'a-long-enough-password', role: 'read-only' };
    const b = await burst(times(N, () => app.api.post('/api/users', body)));
    expect(b.statuses, JSON.stringify(b.statuses)).toEqual({ 201: 1, 409: N - 1 });
  });

  it(`${N} revokes of one API key: one 200, ${N - 1} × 404`, async () => {
    const key = await app.api.post('/api/apikeys', { name: 'racer', role: 'read-only' });
    expect(key.status, key.text).toBe(201);
    const b = await burst(times(N, () => app.api.delete(`/api/apikeys/${key.body.id}`)));
    expect(b.statuses, JSON.stringify(b.statuses)).toEqual({ 200: 1, 404: N - 1 });
  });

  it('the export admitted first is still the only job of its label at the end', async () => {
    await waitFor(async () => (await jobsOf(labels[0]!)).length >= 1);
    expect((await jobsOf(labels[0]!)).filter((j) => j.id < 9_000)).toHaveLength(1);
  });
});
