import type { OpHandler } from '@vtl/reconcile';
import { checkNewDevice } from '../storage/block-devices.js';

/**
 * POST /api/storage and its device add: each named device checked on this node's own disks
 * (missing, mounted, too small, holding a filesystem without force), so a refusal answers the
 * request and nothing is written. Answers the devices' sizes.
 */
export function storageDeviceCheckOp(): OpHandler {
  return async (op) => {
    const devices = (op.params.devices as string[]) ?? [];
    const force = op.params.force === true;
    const sizes: Record<string, number> = {};
    for (const d of devices) sizes[d] = (await checkNewDevice(d, force)).sizeBytes;
    return { sizes };
  };
}
