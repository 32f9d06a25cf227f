import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';
import { parsePrometheus } from './harness/prometheus.js';

/** §6.4: every series and its label names. */
const SERIES: Record<string, string[]> = {
  vtl_pool_fs_used_bytes: ['pool'],
  vtl_pool_fs_total_bytes: ['pool'],
  vtl_pool_logical_bytes: ['pool'],
  vtl_pool_dedup_ratio: ['pool'],
  vtl_pool_compress_ratio: ['pool'],
  vtl_pool_phys_est_bytes: ['pool'],
  vtl_zpool_alloc_bytes: [],
  vtl_zpool_size_bytes: [],
  vtl_fc_target_verified: [],
  vtl_drive_blocks_written: ['drive', 'library'],
  vtl_drive_blocks_read: ['drive', 'library'],
  vtl_jobs_total: ['kind', 'outcome'],
  vtl_job_bytes_total: ['kind', 'outcome'],
  vtl_job_duration_seconds_total: ['kind', 'outcome'],
  vtl_carts: ['library', 'local_state'],
  vtl_target_sessions_active: ['fabric'],
};

describe('metrics, system and the support fingerprint', () => {
  let app: Appliance;
  let machineId: string;
  let serial: string;

  beforeAll(async () => {
    const stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-'));
    machineId = path.join(stateDir, 'machine-id');
    await fs.writeFile(machineId, '0123456789abcdef0123456789abcdef\n');
    app = await Appliance.start({ stateDir, env: { VTL_MACHINE_ID_FILE: machineId } });
    const pool = (await app.api.get('/api/pools')).body[0];
    const declared = await app.api.post('/api/libraries', {
      name: 'metered',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 2,
      num_slots: 10,
      num_map: 2,
      label_prefix: 'MET',
      pool_id: pool.id,
    });
    expect(declared.status).toBe(201);
    serial = declared.body.serial;
    await app.apply();
    expect((await app.api.post('/api/cartridges', { library: 0, count: 3 })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('serves every §6.4 series, publicly, on both listeners, in valid text format', async () => {
    for (const client of [app.anonymous, app.plain]) {
      const res = await client.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const families = parsePrometheus(res.text);
      for (const [name, labels] of Object.entries(SERIES)) {
        const family = families.get(name);
        expect(family, name).toBeDefined();
        expect(['gauge', 'counter']).toContain(family?.type);
        expect(family?.samples.length, name).toBeGreaterThan(0);
        for (const s of family?.samples ?? []) expect(Object.keys(s.labels).sort(), name).toEqual(labels);
      }
      const value = (name: string, labels: Record<string, string>) =>
        families.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
          ?.value;
      expect(value('vtl_carts', { library: serial, local_state: 'resident' })).toBe(3);
      expect(value('vtl_pool_fs_total_bytes', { pool: 'default' })).toBeGreaterThan(0);
      expect(value('vtl_drive_blocks_written', { library: serial, drive: '1' })).toBe(0);
      expect(value('vtl_jobs_total', { kind: 'export', outcome: 'succeeded' })).toBe(0);
      expect(value('vtl_target_sessions_active', { fabric: 'fc' })).toBe(0);
      expect(value('vtl_fc_target_verified', {})).toBe(0);
    }
  });

  it('follows Prometheus conventions beside §6.4: promtool finds nothing; counters, names, up, build info, HTTP durations', async () => {
    await app.api.get('/api/libraries'); // at least one request in the histogram
    const res = await app.plain.get('/metrics');
    // Debian's prometheus package (scripts/install-test-deps.sh): its linter of the text format.
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' });
    expect(lint.error).toBeUndefined();
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
    const families = parsePrometheus(res.text);
    const sample = (name: string, labels: Record<string, string>) =>
      families.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    expect(families.get('vtl_drive_blocks_written_total')?.type).toBe('counter');
    expect(families.get('vtl_drive_blocks_read_total')?.type).toBe('counter');
    for (const direction of ['read', 'written']) {
      const name = `vtl_drive_iscsi_${direction}_bytes_total`;
      expect(families.get(name)?.type, name).toBe('counter');
      expect(sample(name, { library: serial, name: 'metered', drive: '1' })?.value, name).toBe(0);
    }
    expect(
      sample('vtl_drive_blocks_written_total', { library: serial, name: 'metered', drive: '1' })?.value,
    ).toBe(0);
    expect(
      sample('vtl_cartridges', { library: serial, name: 'metered', local_state: 'resident' })?.value,
    ).toBe(3);
    expect(sample('vtl_library_info', { library: serial, name: 'metered' })?.value).toBe(1);
    for (const component of ['apiserver', 'etcd', 'controller', 'nodeagent', 'emulator'])
      expect(sample('vtl_up', { component })?.value, component).toBe(1);
    expect(sample('vtl_build_info', { version: 'v0.1.0' })?.labels.node_version).toBe(process.version);
    expect(families.get('process_resident_memory_bytes')?.samples[0]?.value).toBeGreaterThan(0);
    expect(families.get('nodejs_eventloop_lag_seconds')).toBeDefined();
    expect(families.get('http_request_duration_seconds')?.type).toBe('histogram');
    const count = families
      .get('http_request_duration_seconds')
      ?.samples.find(
        (s) =>
          s.name === 'http_request_duration_seconds_count' &&
          s.labels.route === '/api/libraries' &&
          s.labels.method === 'GET' &&
          s.labels.status_code === '200',
      );
    expect(count?.value).toBeGreaterThanOrEqual(1);
  });

  it('reports the system completely', async () => {
    const res = await app.api.get('/api/system');
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'active_jobs',
        'apikeys_enabled',
        'draining',
        'plain_listener',
        'started_at',
        'system_name',
        'system_uuid',
        'uptime_sec',
        'version',
      ].sort(),
    );
    expect(res.body.started_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await app.api.put('/api/settings', { 'system.name': 'site-c' })).status).toBe(200);
    expect((await app.api.get('/api/system')).body.system_name).toBe('site-c');
  });

  it('derives the support fingerprint from the machine identity and notices when it changes', async () => {
    const first = (await app.api.get('/api/license')).body;
    expect(first.fingerprint).toMatch(/^VTL-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    expect(first).toMatchObject({ changed: false, previous: '' });
    expect((await app.api.get('/api/license')).body).toEqual(first);

    await fs.writeFile(machineId, 'fedcba9876543210fedcba9876543210\n'); // an OS reinstall
    const moved = (await app.api.get('/api/license')).body;
    expect(moved.fingerprint).not.toBe(first.fingerprint);
    expect(moved).toMatchObject({ changed: true, previous: first.fingerprint });

    const ack = await app.api.post('/api/license/ack');
    expect(ack.body).toEqual({ ok: true, fingerprint: moved.fingerprint });
    expect((await app.api.get('/api/license')).body).toEqual({
      fingerprint: moved.fingerprint,
      changed: false,
      previous: '',
    });
  });
});
