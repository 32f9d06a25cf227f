import type { OpHandler } from '@vtl/reconcile';
import type { HostPower } from '../host-power.js';

/**
 * POST /api/system/reboot (§4.2): reboots this node's host. The reboot runs after the outcome
 * is recorded, so a retried op after the boot finds it finished instead of rebooting again.
 */
export function rebootOp(hostPower: HostPower): OpHandler {
  return async (op, ctx) => {
    await ctx.step('Rebooting the host');
    ctx.announceReboot();
    ctx.afterFinish(() => hostPower.reboot(`reboot requested by ${op.requested_by || 'an admin'}`));
    return { ok: true, rebooting: true };
  };
}
