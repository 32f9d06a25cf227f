import { expect } from 'vitest';
import { LioFcDriver, type FcPlan, type LioDriverOptions } from '../lio-driver.js';
import { lioFabric } from '../lio-fabric.js';
import { lunTable } from '../lun-table.js';
import { KernelTree } from './kernel-tree.js';

/** FOR TESTS ONLY: a library as the emulator reports it, with `drives` idle drives. */
export const emuLibrary = (id: number, drives: number) => ({
  id,
  serial: `LIB${id}`,
  changer: `iqn.test:lun${id}`,
  drives: Array.from({ length: drives }, (_, index) => ({
    index,
    queue_id: index,
    serial: `D${id}${index}`,
    product: 'ULT3580-TD9',
    device: `iqn.test:lib${id}:d${index}`,
    loaded: '',
    source_slot: 0,
    activity: 'idle' as const,
    blocks_written: 0,
    blocks_read: 0,
    last_active: '',
  })),
  slots: [],
  cartridges: [],
});

/** The driver tests' LUN table: library 1 with two drives, library 2 with one. */
export const TEST_LUNS = lunTable([emuLibrary(1, 2), emuLibrary(2, 1)]);
export const lunsOf = (lib: number) => TEST_LUNS.filter((l) => l.library === lib).map((l) => l.lun);
export const testPlan = (acls: FcPlan['acls'], disabled: string[] = []): FcPlan => ({
  disabled: new Set(disabled),
  luns: TEST_LUNS,
  acls,
});

/** A kernel-like tree for one fabric, ticking, and the driver on it. */
export async function startDriverBench(
  opts: LioDriverOptions = {},
): Promise<{ tree: KernelTree; driver: LioFcDriver }> {
  const tree = await KernelTree.create(lioFabric(opts.fabric ?? 'qla2xxx'));
  tree.start();
  return { tree, driver: new LioFcDriver(tree.configfsRoot, tree.sysfsRoot, opts) };
}

/** A pass as the nodeagent runs it, then two kernel ticks so sessions reflect it; no problems. */
export async function applyAndSync(
  tree: KernelTree,
  driver: LioFcDriver,
  plan: FcPlan,
  opts: { rebuild?: boolean } = {},
): Promise<string[]> {
  const problems = await driver.apply(plan, opts);
  await tree.sync();
  await tree.sync();
  expect(problems).toEqual([]);
  return problems;
}
