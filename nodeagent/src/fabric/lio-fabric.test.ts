import { afterEach, describe, expect, it } from 'vitest';
import { ConfigFs } from './configfs.js';
import { LioFcDriver, type FcPlan } from './lio-driver.js';
import { TCMU_HBA } from './lio-objects.js';
import type { KernelTree } from './testing/kernel-tree.js';
import { TEST_LUNS, applyAndSync, lunsOf, startDriverBench, testPlan } from './testing/driver-bench.js';

const TARGET = 'iqn.2026-11.io.vtl:fc-test';
const HOST_A = 'iqn.2026-11.test:host-a';
const HOST_B = 'iqn.2026-11.test:host-b';

const luns = TEST_LUNS;
const plan = testPlan;

describe('the LIO driver on the iscsi test fabric (same ACL logic as qla2xxx)', () => {
  let tree: KernelTree;
  afterEach(() => tree?.destroy());
  const start = async () => {
    let driver: LioFcDriver;
    ({ tree, driver } = await startDriverBench({ fabric: 'iscsi', ports: [TARGET], portal: '0.0.0.0:3260' }));
    return driver;
  };
  const apply = (driver: LioFcDriver, p: FcPlan) => applyAndSync(tree, driver, p);

  it('builds an iSCSI target with a portal, no CHAP, hard deny, the LUN table and IQN-named ACLs', async () => {
    const driver = await start();
    await apply(driver, plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }]));
    const cfs = new ConfigFs(tree.configfsRoot);
    const tpg = `target/iscsi/${TARGET}/tpgt_1`;
    expect(await cfs.read(`${tpg}/enable`)).toBe('1');
    expect(await cfs.read(`${tpg}/attrib/generate_node_acls`)).toBe('0');
    expect(await cfs.read(`${tpg}/attrib/authentication`)).toBe('0');
    expect(await cfs.groups(`${tpg}/np`)).toEqual(['0.0.0.0:3260']);
    expect(await cfs.groups(`${tpg}/lun`)).toEqual(['lun_0', 'lun_1', 'lun_2', 'lun_3', 'lun_4']);
    expect(await cfs.read(`${TCMU_HBA}/vtl-lib1-changer/enable`)).toBe('1');
    expect(await driver.verify(plan([]))).toEqual([]);
    const seen = await driver.observe();
    expect(seen.ports).toEqual([{ host: 'iscsi', wwpn: TARGET, state: 'Online', speed: 'unknown' }]);
    expect(seen.acls.map((a) => [a.wwpn, a.mapped_luns])).toEqual([[HOST_A, [0, 1, 2]]]);
  });

  it('a scope change bounces only that host; a deregistered host loses its session', async () => {
    const driver = await start();
    const both = [
      { wwpn: HOST_A, ports: '', luns: lunsOf(1) },
      { wwpn: HOST_B, ports: '', luns: lunsOf(1) },
    ];
    await apply(driver, plan(both));
    await tree.login(TARGET, HOST_A);
    await tree.login(TARGET, HOST_B);
    const a = tree.session(TARGET, HOST_A);
    const b = tree.session(TARGET, HOST_B);
    expect(a).not.toBe('');
    await apply(driver, plan([both[0]!, { wwpn: HOST_B, ports: '', luns: lunsOf(2) }]));
    expect(tree.session(TARGET, HOST_A)).toBe(a);
    expect(tree.session(TARGET, HOST_B)).not.toBe(b);
    expect((await driver.observe()).acls.find((x) => x.wwpn === HOST_B)?.mapped_luns).toEqual(lunsOf(2));
    await apply(driver, plan([both[0]!]));
    expect(tree.session(TARGET, HOST_B)).toBe('');
    expect(tree.session(TARGET, HOST_A)).toBe(a);
  });

  it('retiring the port removes its portal, ACLs, LUNs and the target', async () => {
    const driver = await start();
    await apply(driver, plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }]));
    await apply(driver, plan([{ wwpn: HOST_A, ports: '', luns: lunsOf(1) }], [TARGET]));
    expect(await new ConfigFs(tree.configfsRoot).exists(`target/iscsi/${TARGET}`)).toBe(false);
  });
});

describe('the LIO driver on the loopback test fabric', () => {
  let tree: KernelTree;
  afterEach(() => tree?.destroy());

  it('switches the tcm_loop TPG by its nexus, not an enable attribute, and sets no hard deny', async () => {
    let driver: LioFcDriver;
    ({ tree, driver } = await startDriverBench({
      fabric: 'loopback',
      ports: ['naa.5001405aa0000001'],
      nexus: 'naa.5001405bb0000001',
    }));
    // The nexus must be there before the first LUN: tcm_loop probes a LUN when it is linked.
    const order: string[] = [];
    class Recording extends ConfigFs {
      override async write(rel: string, value: string) {
        if (rel.endsWith('/nexus')) order.push('nexus');
        return super.write(rel, value);
      }
      override async ensureLink(target: string, rel: string) {
        if (rel.includes('/lun/lun_')) order.push('lun');
        return super.ensureLink(target, rel);
      }
    }
    (driver as unknown as { cfs: ConfigFs }).cfs = new Recording(tree.configfsRoot);
    expect(await driver.apply(plan([]))).toEqual([]);
    expect(order[0]).toBe('nexus');
    expect(order.filter((o) => o === 'lun')).toHaveLength(luns.length);
    const cfs = new ConfigFs(tree.configfsRoot);
    const tpg = 'target/loopback/naa.5001405aa0000001/tpgt_1';
    expect(await cfs.read(`${tpg}/nexus`)).toBe('naa.5001405bb0000001');
    expect(await cfs.exists(`${tpg}/enable`)).toBe(false);
    expect(await cfs.read(`${tpg}/attrib/generate_node_acls`)).toBeUndefined();
    expect([...(await driver.observe()).built]).toEqual(['naa.5001405aa0000001']);
    expect(await driver.verify(plan([]))).toEqual([]);
  });

  it('refuses to enable a loopback TPG without a nexus name', async () => {
    let driver: LioFcDriver;
    ({ tree, driver } = await startDriverBench({ fabric: 'loopback', ports: ['naa.5001405aa0000001'] }));
    expect((await driver.apply(plan([])))[0]).toMatch(/needs a nexus initiator name/);
  });
});
