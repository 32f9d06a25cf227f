import type { ScsiDevice } from '../../scsi/types.js';
import { snLessThan } from './serial-number.js';
import type { ScsiTask } from './scsi-task.js';

/** Task management function codes (RFC 7143 11.5.1). */
export const TmfFunction = {
  ABORT_TASK: 1,
  ABORT_TASK_SET: 2,
  CLEAR_ACA: 3,
  CLEAR_TASK_SET: 4,
  LOGICAL_UNIT_RESET: 5,
  TARGET_WARM_RESET: 6,
  TARGET_COLD_RESET: 7,
  TASK_REASSIGN: 8,
} as const;

/** Task management responses (RFC 7143 11.6.1). */
export const TmfResponse = {
  FUNCTION_COMPLETE: 0,
  TASK_DOES_NOT_EXIST: 1,
  LUN_DOES_NOT_EXIST: 2,
  TASK_STILL_ALLEGIANT: 3,
  REASSIGNMENT_NOT_SUPPORTED: 4,
  NOT_SUPPORTED: 5,
  AUTHORIZATION_FAILED: 6,
  REJECTED: 255,
} as const;

/** The session state task management reads and changes. */
export interface TmfHost {
  readonly tasks: ReadonlyMap<number, ScsiTask>;
  readonly expCmdSn: number;
  readonly nexus: string;
  deviceAt(lun: number): ScsiDevice | undefined;
  /** Aborts every task of every session on the target that addresses this device. */
  resetLogicalUnit(device: ScsiDevice, by: string): Promise<void>;
}

export interface TmfRequest {
  fn: number;
  lun: number;
  referencedTaskTag: number;
  refCmdSn: number;
  cmdSn: number;
}

/**
 * Carries out one task management request and returns the response code. Aborted tasks get
 * no SCSI response of their own; the TMF response is sent after they are gone (RFC 7143 4.2.3.3).
 */
export async function performTaskManagement(host: TmfHost, req: TmfRequest): Promise<number> {
  switch (req.fn) {
    case TmfFunction.ABORT_TASK: {
      const task = host.tasks.get(req.referencedTaskTag);
      if (task && task.lun === req.lun) {
        await task.abort();
        host.deviceAt(req.lun)?.notify?.({ kind: 'tasks-aborted', nexus: host.nexus });
        return TmfResponse.FUNCTION_COMPLETE;
      }
      // Not here: if its CmdSN was never received, consider it received and done (RFC 7143 11.5.1 b).
      const unreceived = !snLessThan(req.refCmdSn, host.expCmdSn) && snLessThan(req.refCmdSn, req.cmdSn);
      return unreceived ? TmfResponse.FUNCTION_COMPLETE : TmfResponse.TASK_DOES_NOT_EXIST;
    }
    case TmfFunction.ABORT_TASK_SET:
    case TmfFunction.CLEAR_TASK_SET: {
      const device = host.deviceAt(req.lun);
      if (!device) return TmfResponse.LUN_DOES_NOT_EXIST;
      await Promise.all([...host.tasks.values()].filter((t) => t.lun === req.lun).map((t) => t.abort()));
      device.notify?.({ kind: 'tasks-aborted', nexus: host.nexus });
      return TmfResponse.FUNCTION_COMPLETE;
    }
    case TmfFunction.LOGICAL_UNIT_RESET: {
      const device = host.deviceAt(req.lun);
      if (!device) return TmfResponse.LUN_DOES_NOT_EXIST;
      await host.resetLogicalUnit(device, host.nexus);
      return TmfResponse.FUNCTION_COMPLETE;
    }
    case TmfFunction.TASK_REASSIGN:
      return TmfResponse.REASSIGNMENT_NOT_SUPPORTED;
    default:
      return TmfResponse.NOT_SUPPORTED;
  }
}
