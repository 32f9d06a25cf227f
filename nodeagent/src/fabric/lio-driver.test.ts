import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigFs } from './configfs.js';
import { LioFcDriver, type FcPlan } from './lio-driver.js';
import { NodeAcl, QlaTpg, TCMU_HBA } from './lio-objects.js';
import type { KernelTree } from './testing/kernel-tree.js';
import { applyAndSync, lunsOf, startDriverBench, testPlan } from './testing/driver-bench.js';

const PORT1 = 'naa.21000024ff000001';
const PORT2 = 'naa.21000024ff000002';
const HOST_A = 'naa.10000000c9aaaaaa';
const HOST_B = 'naa.10000000c9bbbbbb';

describe('the LIO FC driver against a kernel-like configfs tree', () => {
  let tree: KernelTree;
  let driver: LioFcDriver;
  const plan = testPlan;
  const apply = (p: FcPlan, opts: { rebuild?: boolean } = {}) => applyAndSync(tree, driver, p, opts);

  beforeEach(async () => {
    ({ tree, driver } = await startDriverBench());
  });
  afterEach(async () => {
    await tree.destroy();
  });

  it('with no HBA builds nothing, reports no ports and is healthy', async () => {
    expect(await driver.apply(plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }]))).toEqual([]);
    expect(await driver.observe()).toEqual({ ports: [], built: new Set(), acls: [] });
    expect(await fs.readdir(tree.configfsRoot)).toEqual([]);
  });

  it('builds a qla2xxx target per port with the LUN table over TCMU backstores and hard-deny ACLs', async () => {
    await tree.addHostPort('host1', PORT1);
    await tree.addHostPort('host2', PORT2, { state: 'Linkdown', speed: 'unknown' });
    const problems = await apply(
      plan([
        { wwpn: HOST_A, ports: '', luns: lunsOf(1) },
        { wwpn: HOST_B, ports: PORT2, luns: [] },
      ]),
    );
    expect(problems).toEqual([]);
    expect(await driver.verify(plan([]))).toEqual([]);
    const cfs = new ConfigFs(tree.configfsRoot);
    const tpg = 'target/qla2xxx/21:00:00:24:ff:00:00:01/tpgt_1';
    expect(await cfs.read(`${tpg}/enable`)).toBe('1');
    expect(await cfs.read(`${tpg}/attrib/generate_node_acls`)).toBe('0');
    expect(await cfs.groups(`${tpg}/lun`)).toEqual(['lun_0', 'lun_1', 'lun_2', 'lun_3', 'lun_4']);
    const link = await cfs.links(`${tpg}/lun/lun_3`);
    expect(link[0]?.target).toBe(path.join(tree.configfsRoot, TCMU_HBA, 'vtl-lib2-changer'));
    expect(await cfs.read(`${TCMU_HBA}/vtl-lib2-changer/enable`)).toBe('1');
    // Initiator A everywhere with library 1's LUNs; B only on port 2, with none.
    expect(await cfs.groups(`${tpg}/acls/10:00:00:00:c9:aa:aa:aa`)).toEqual(
      expect.arrayContaining(['lun_0', 'lun_1', 'lun_2']),
    );
    const seen = await driver.observe();
    expect(seen.ports).toEqual([
      { host: 'host1', wwpn: PORT1, state: 'Online', speed: '16 Gbit' },
      { host: 'host2', wwpn: PORT2, state: 'Linkdown', speed: 'unknown' },
    ]);
    expect([...seen.built].sort()).toEqual([PORT1, PORT2]);
    expect(seen.acls.map((a) => [a.port, a.wwpn, a.mapped_luns]).sort()).toEqual(
      [
        [PORT1, HOST_A, [0, 1, 2]],
        [PORT2, HOST_A, [0, 1, 2]],
        [PORT2, HOST_B, []],
      ].sort(),
    );
  });

  it('applies only what changed: a LUN map change bounces that host alone; unchanged passes touch nothing', async () => {
    await tree.addHostPort('host1', PORT1);
    const before = [
      { wwpn: HOST_A, ports: '', luns: lunsOf(1) },
      { wwpn: HOST_B, ports: '', luns: lunsOf(1) },
    ];
    await apply(plan(before));
    await tree.login(PORT1, HOST_A);
    await tree.login(PORT1, HOST_B);
    const a = tree.session(PORT1, HOST_A);
    const b = tree.session(PORT1, HOST_B);
    expect(a).not.toBe('');
    expect(b).not.toBe('');
    expect((await driver.observe()).acls.find((x) => x.wwpn === HOST_A)).toMatchObject({
      logged_in: true,
      session: a,
    });

    await apply(plan(before)); // idempotent
    expect([tree.session(PORT1, HOST_A), tree.session(PORT1, HOST_B)]).toEqual([a, b]);

    await apply(plan([before[0]!, { wwpn: HOST_B, ports: '', luns: lunsOf(2) }]));
    expect(tree.session(PORT1, HOST_A)).toBe(a);
    expect(tree.session(PORT1, HOST_B)).not.toBe('');
    expect(tree.session(PORT1, HOST_B)).not.toBe(b);
    expect((await driver.observe()).acls.find((x) => x.wwpn === HOST_B)?.mapped_luns).toEqual(lunsOf(2));
  });

  it('creating an ACL for a host already logged in brings its session up; deleting it drops it', async () => {
    await tree.addHostPort('host1', PORT1);
    await apply(plan([]));
    await tree.login(PORT1, HOST_A);
    expect(tree.session(PORT1, HOST_A)).toBe('');
    await apply(plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }]));
    expect(tree.session(PORT1, HOST_A)).not.toBe('');
    await apply(plan([]));
    expect(tree.session(PORT1, HOST_A)).toBe('');
    expect((await driver.observe()).acls).toEqual([]);
  });

  it('reports ACLs it did not make and never deletes them', async () => {
    await tree.addHostPort('host1', PORT1);
    await apply(plan([]));
    await tree.addForeignAcl(PORT1, HOST_B);
    await apply(plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }]));
    await apply(plan([]));
    expect((await driver.observe()).acls.map((a) => a.wwpn)).toEqual([HOST_B]);
  });

  it('disabling a port drops every session on it and leaves the other port alone', async () => {
    await tree.addHostPort('host1', PORT1);
    await tree.addHostPort('host2', PORT2);
    const acls = [{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }];
    await apply(plan(acls));
    await tree.login(PORT1, HOST_A);
    await tree.login(PORT2, HOST_A);
    const onPort1 = tree.session(PORT1, HOST_A);
    await apply(plan(acls, [PORT2]));
    expect(tree.session(PORT2, HOST_A)).toBe('');
    expect(tree.session(PORT1, HOST_A)).toBe(onPort1);
    const seen = await driver.observe();
    expect([...seen.built]).toEqual([PORT1]);
    expect(await new QlaTpg(driver.cfs, PORT2).exists()).toBe(false);
    await apply(plan(acls));
    expect(tree.session(PORT2, HOST_A)).not.toBe('');
  });

  it('a rebuild cycles every served TPG: every session comes back as a new one', async () => {
    await tree.addHostPort('host1', PORT1);
    const acls = [{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }];
    await apply(plan(acls));
    await tree.login(PORT1, HOST_A);
    const before = tree.session(PORT1, HOST_A);
    await apply(plan(acls), { rebuild: true });
    expect(tree.session(PORT1, HOST_A)).not.toBe(before);
    expect(tree.session(PORT1, HOST_A)).not.toBe('');
  });

  it('rolls a half-made ACL back when a mapping fails', async () => {
    await tree.addHostPort('host1', PORT1);
    await apply(plan([]));
    class FailingConfigFs extends ConfigFs {
      override async write(rel: string, value: string) {
        if (rel.endsWith('lun_1/write_protect')) throw new Error('injected: write_protect refused');
        return super.write(rel, value);
      }
    }
    const cfs = new FailingConfigFs(tree.configfsRoot);
    const tpg = new QlaTpg(cfs, PORT1);
    const acl = new NodeAcl(cfs, tpg.path, HOST_A);
    await expect(acl.create([0, 1, 2])).rejects.toThrow(/injected/);
    expect(await acl.exists()).toBe(false);
  });
});
