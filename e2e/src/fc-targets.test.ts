import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { KernelTree } from '@vtl/nodeagent/testing/kernel-tree';
import { Appliance } from './harness/appliance.js';

const PORT1 = 'naa.21000024ff000001';
const PORT2 = 'naa.21000024ff000002';
const HOST_A = 'naa.10000000c9aaaaaa';
const HOST_B = 'naa.10000000c9bbbbbb';
const FOREIGN = 'naa.10000000c9cccccc';
const BROKEN = 'naa.10000000c9dddddd';

interface View {
  fc: { ports: { wwpn: string; serving: boolean; built: boolean; state: string }[]; no_hba: boolean };
  luns: { lun: number; backstore: string; device: string; library: number }[];
  libraries: number[];
  initiators: { wwpn: string; logged_in: boolean; applied: boolean; port_state: string; libraries: string }[];
  unmanaged?: { port: string; wwpn: string }[];
  error?: string;
}

/**
 * Fibre Channel end to end: the real appliance, its nodeagent running the real LIO driver
 * against a kernel-like configfs/sysfs tree (this machine has no HBA), and simulated hosts
 * logging in to the fabric.
 */
describe('FC targets and the initiator registry, applied live to LIO', () => {
  let tree: KernelTree;
  let app: Appliance;
  let library: number;
  const view = async (): Promise<View> => (await app.api.get('/api/targets')).body;
  const initiator = async (wwpn: string) => (await view()).initiators.find((i) => i.wwpn === wwpn);
  const until = (check: () => Promise<boolean> | boolean) =>
    waitFor(check, { timeoutMs: 15_000, intervalMs: 100 });

  beforeAll(async () => {
    tree = await KernelTree.create();
    await tree.addHostPort('host1', PORT1);
    await tree.addHostPort('host2', PORT2, { speed: '32 Gbit' });
    tree.start();
    app = await Appliance.start({ env: { ...tree.env, VTL_ISCSI_OPEN: '0' } });
    const pool = (await app.api.get('/api/pools')).body[0];
    const declared = await app.api.post('/api/libraries', {
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 2,
      label_prefix: 'FCA',
      pool_id: pool.id,
    });
    expect(declared.status).toBe(201);
    library = declared.body.library;
  }, 120_000);
  afterAll(async () => {
    await app?.destroy();
    await tree?.destroy();
  });

  // An apply may take up to the API's operation timeout (VTL_OP_TIMEOUT_MS, 120 s) on a busy machine.
  it('activation rebuilds the FC target and reports its real outcome', async () => {
    const res = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.fc.OK).toBe(true);
    expect(res.body.fc.Detail).toMatch(/2 port\(s\) serving 3 LUNs/);
    const status = (await app.api.get('/api/status')).body;
    expect(status.fc).toMatchObject({ target_wwn: '', verified: true, no_hba: false });
    expect(Date.parse(status.fc.verified_at)).toBeGreaterThan(0);
    expect(status.fabrics.fc).toMatchObject({ present: true, verified: true, sessions: 0 });
    const events = (await app.api.get('/api/events/recent')).body;
    expect(events.some((e: { kind: string }) => e.kind === 'fc_state')).toBe(true);
    expect((await app.plain.get('/metrics')).text).toMatch(/^vtl_fc_target_verified 1$/m);
  }, 150_000);

  it('shows the ports and one LUN table on every port, backed by TCMU backstores', async () => {
    const v = await view();
    expect(v.fc).toEqual({
      no_hba: false,
      ports: [
        { host: 'host1', wwpn: PORT1, state: 'Online', speed: '16 Gbit', serving: true, built: true },
        { host: 'host2', wwpn: PORT2, state: 'Online', speed: '32 Gbit', serving: true, built: true },
      ],
    });
    expect(v.luns.map((l) => [l.lun, l.library, l.backstore])).toEqual([
      [0, library, `core/user_1/vtl-lib${library}-changer`],
      [1, library, `core/user_1/vtl-lib${library}-drive0`],
      [2, library, `core/user_1/vtl-lib${library}-drive1`],
    ]);
    expect(v.luns.every((l) => l.device !== '')).toBe(true);
    expect(v.libraries).toEqual([library]);
    expect(v.unmanaged).toBeUndefined();
    expect(v.error).toBeUndefined();
  });

  it('registering a host already logged in to the fabric brings its session up at once', async () => {
    await tree.login(PORT1, HOST_A);
    await tree.sync();
    expect(tree.session(PORT1, HOST_A)).toBe(''); // hard deny until registered
    const res = await app.api.post('/api/targets/acls', {
      wwpn: '10:00:00:00:C9:AA:AA:AA',
      alias: 'backup-a',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.initiators[0]).toMatchObject({
      wwpn: HOST_A,
      alias: 'backup-a',
      fabric: 'fc',
      applied: true,
    });
    await until(() => tree.session(PORT1, HOST_A) !== '');
    await until(async () => (await initiator(HOST_A))?.logged_in === true);
    expect((await initiator(HOST_A))?.port_state).toBe('Online');
  });

  it('changing one host’s LUN map bounces that host only', async () => {
    expect((await app.api.post('/api/targets/acls', { wwpn: '10000000c9bbbbbb' })).status).toBe(200);
    await tree.login(PORT1, HOST_B);
    await tree.login(PORT2, HOST_B);
    await until(() => tree.session(PORT1, HOST_B) !== '' && tree.session(PORT2, HOST_B) !== '');
    const b1 = tree.session(PORT1, HOST_B);
    const b2 = tree.session(PORT2, HOST_B);
    const a = tree.session(PORT1, HOST_A);

    const res = await app.api.put(`/api/targets/acls/${HOST_A}`, { libraries: [] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.initiators.find((i: { wwpn: string }) => i.wwpn === HOST_A)).toMatchObject({
      libraries: '-',
      applied: true,
    });
    await until(() => tree.session(PORT1, HOST_A) !== '' && tree.session(PORT1, HOST_A) !== a);
    expect([tree.session(PORT1, HOST_B), tree.session(PORT2, HOST_B)]).toEqual([b1, b2]);
    await until(async () => (await app.api.get('/api/status')).body.fabrics.fc.sessions === 3);
    expect((await app.plain.get('/metrics')).text).toMatch(/vtl_target_sessions_active\{fabric="fc"\} 3/);
  });

  it('reports an ACL it did not make as unmanaged and never deletes it', async () => {
    await tree.addForeignAcl(PORT2, FOREIGN);
    await until(
      async () => (await view()).unmanaged?.some((u) => u.wwpn === FOREIGN && u.port === PORT2) ?? false,
    );
    // Another registry change (a full pass over every port) leaves it in place.
    expect((await app.api.put(`/api/targets/acls/${HOST_B}`, { alias: 'backup-b' })).status).toBe(200);
    expect((await view()).unmanaged).toEqual([
      { port: PORT2, wwpn: FOREIGN, mapped_luns: [], logged_in: false },
    ]);
    expect(await fs.stat(tree.aclPath(PORT2, FOREIGN)).then(() => true)).toBe(true);
  });

  it('records a registry change even when the live apply fails, and says why', async () => {
    await fs.writeFile(tree.aclPath(PORT1, BROKEN), 'not a directory'); // the kernel side is damaged
    const res = await app.api.post('/api/targets/acls', { wwpn: BROKEN });
    expect(res.status, res.text).toBe(200);
    expect(res.body.error).toMatch(/10000000c9dddddd|port naa\.21000024ff000001/);
    expect(res.body.initiators.find((i: { wwpn: string }) => i.wwpn === BROKEN)).toMatchObject({
      applied: false,
    });
    await fs.rm(tree.aclPath(PORT1, BROKEN));
    await until(async () => {
      const v = await view();
      return v.error === undefined && v.initiators.find((i) => i.wwpn === BROKEN)?.applied === true;
    });
    expect((await app.api.delete(`/api/targets/acls/${BROKEN}`)).status).toBe(200);
  });

  it('refuses to deregister a logged-in host without force=1; with it, drops that host alone', async () => {
    const a = tree.session(PORT1, HOST_A);
    const refused = await app.api.delete(`/api/targets/acls/${HOST_B}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/force=1/);
    // Any WWPN form names the initiator.
    expect((await app.api.delete('/api/targets/acls/10:00:00:00:c9:bb:bb:bb')).status).toBe(400);
    const forced = await app.api.delete(`/api/targets/acls/${HOST_B}?force=1`);
    expect(forced.status).toBe(200);
    expect(forced.body.initiators.map((i: { wwpn: string }) => i.wwpn)).toEqual([HOST_A]);
    await until(() => tree.session(PORT1, HOST_B) === '' && tree.session(PORT2, HOST_B) === '');
    expect(tree.session(PORT1, HOST_A)).toBe(a);
  });

  it('disabling a port drops every session on it and persists fc.disabled_ports; enabling rebuilds it', async () => {
    await tree.login(PORT2, HOST_A);
    await until(() => tree.session(PORT2, HOST_A) !== '');
    const onPort1 = tree.session(PORT1, HOST_A);
    const off = await app.api.put('/api/targets/ports', { wwn: PORT2, serving: false });
    expect(off.status, off.text).toBe(200);
    expect(off.body.fc.ports.find((p: { wwpn: string }) => p.wwpn === PORT2)).toMatchObject({
      serving: false,
      built: false,
    });
    await until(() => tree.session(PORT2, HOST_A) === '');
    expect(tree.session(PORT1, HOST_A)).toBe(onPort1);
    expect((await app.api.get('/api/settings')).body['fc.disabled_ports']).toBe(PORT2);
    // The foreign ACL on that port is still reported, not deleted.
    expect((await view()).unmanaged?.map((u) => u.wwpn)).toEqual([FOREIGN]);

    const on = await app.api.put('/api/targets/ports', { wwn: PORT2, serving: true });
    expect(on.status).toBe(200);
    expect(on.body.fc.ports.find((p: { wwpn: string }) => p.wwpn === PORT2)).toMatchObject({
      serving: true,
      built: true,
    });
    await until(() => tree.session(PORT2, HOST_A) !== '');
    expect((await app.api.get('/api/settings')).body['fc.disabled_ports']).toBe('');
  });
});
