import { VtlError, type Op } from '@vtl/api';
import type { OpHandler } from '@vtl/reconcile';
import type { EventJournal } from '@vtl/store';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';

const num = (op: Op, name: string) => Number(op.params[name]);

function running(supervisor: EmulatorSupervisor) {
  const emulator = supervisor.emulator;
  if (!emulator)
    throw new VtlError(
      'bad_request',
      'The tape emulator is not running on this node; the library is not live.',
    );
  return emulator;
}

/** API load/unload (§4.6 rules 6–7). Re-running after a crash finds the move already made. */
export function driveOps(deps: {
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  journal: EventJournal;
}) {
  const { supervisor, publisher } = deps;

  const load: OpHandler = async (op) => {
    const [library, drive, label] = [num(op, 'library'), num(op, 'drive'), String(op.params.label)];
    const emulator = running(supervisor);
    const lib = (await emulator.status()).libraries.find((l) => l.id === library);
    if (lib?.drives.find((d) => d.index === drive)?.loaded === label)
      return { ok: true, detail: `${label} is in drive ${drive}` };
    const result = await emulator.load({ library, drive, label });
    await publisher.publish();
    return { ok: true, detail: result.detail };
  };

  const unload: OpHandler = async (op) => {
    const [library, drive] = [num(op, 'library'), num(op, 'drive')];
    const emulator = running(supervisor);
    const result = await emulator.unload({ library, drive });
    await publisher.publish();
    return { ok: true, detail: result.detail, slot: result.slot };
  };

  return { load, unload };
}
