import { scopeIncludes, type InitiatorRecord } from '@vtl/api';
import type { FcPlan } from './lio-driver.js';
import type { LunPlan } from './lun-table.js';

/**
 * What the FC target of a node should be: the LUN table, the registered FC initiators with the
 * LUNs of the libraries in their scope, and the ports `fc.disabled_ports` excludes. The fabric
 * reconciler builds its plan here, and the guest tests build theirs the same way, so the plan
 * proven on a real kernel is the one the nodeagent applies.
 */
export function fcPlan(
  initiators: readonly Pick<InitiatorRecord, 'wwpn' | 'fabric' | 'ports' | 'libraries'>[],
  disabledPorts: string,
  luns: readonly LunPlan[],
): FcPlan {
  return {
    disabled: new Set(disabledPorts.split(',').filter(Boolean)),
    luns,
    acls: initiators
      .filter((r) => r.fabric === 'fc')
      .map((r) => ({
        wwpn: r.wwpn,
        ports: r.ports,
        luns: luns.filter((l) => scopeIncludes(r.libraries, l.library)).map((l) => l.lun),
      })),
  };
}
