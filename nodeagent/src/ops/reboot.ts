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
    // A controller-asked reboot (after a library delete) says why; an admin's names the admin.
    const reason = typeof op.params.reason === 'string' ? op.params.reason : undefined;
    ctx.afterFinish(() => hostPower.reboot(reason ?? `reboot requested by ${op.requested_by || 'an admin'}`));
    return { ok: true, rebooting: true };
  };
}
