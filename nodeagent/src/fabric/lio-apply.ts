import fs from 'node:fs/promises';
import { LioFcDriver, type FcPlan } from './lio-driver.js';
import type { LioFabricName } from './lio-fabric.js';
import type { LunPlan } from './lun-table.js';

/** One request to the driver, as the guest tests write it (JSON; the plan's Set as an array). */
export interface LioApplyRequest {
  fabric: LioFabricName;
  /** The test fabric's target names (an iSCSI target IQN, a tcm_loop WWN). */
  ports: string[];
  portal?: string;
  nexus?: string;
  configfs?: string;
  sysfs?: string;
  /** Absent: only observe. */
  plan?: { disabled: string[]; luns: readonly LunPlan[]; acls: FcPlan['acls'] };
}

/**
 * The nodeagent's LIO driver as a command, for a machine where only the kernel part of the
 * appliance runs (the guest tests' real target core): `node lio-apply.js REQUEST.json` applies
 * the request's plan (if any) exactly as the fabric reconciler does, verifies it, reads back the
 * kernel and prints one `LIO-APPLY {json}` line (problems, verify problems, observation). Exit
 * status 1 when anything failed.
 */
export async function runLioApply(request: LioApplyRequest): Promise<{ ok: boolean; line: string }> {
  const driver = new LioFcDriver(request.configfs ?? '/sys/kernel/config', request.sysfs ?? '/sys', {
    fabric: request.fabric,
    ports: request.ports,
    portal: request.portal,
    nexus: request.nexus,
  });
  const problems: string[] = [];
  const verify: string[] = [];
  if (request.plan) {
    const plan: FcPlan = { ...request.plan, disabled: new Set(request.plan.disabled) };
    problems.push(...(await driver.apply(plan)));
    verify.push(...(await driver.verify(plan)));
  }
  const seen = await driver.observe();
  const result = { problems, verify, built: [...seen.built], acls: seen.acls };
  return { ok: problems.length === 0 && verify.length === 0, line: `LIO-APPLY ${JSON.stringify(result)}` };
}

/** The command's main: `lio-apply REQUEST.json` (the guest tests' bundle calls it). */
export async function lioApplyMain(file: string): Promise<number> {
  const request = JSON.parse(await fs.readFile(file, 'utf8')) as LioApplyRequest;
  const { ok, line } = await runLioApply(request);
  console.log(line);
  return ok ? 0 : 1;
}
