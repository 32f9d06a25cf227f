import { InitiatorRecord, Settings, isoNow, keys, type NodeFabricStatus } from '@vtl/api';
import { createHash } from 'node:crypto';
import { Requeue, startController, watchInto } from '@vtl/reconcile';
import type { EventJournal, Informer, Store } from '@vtl/store';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import { EmulatorStatusFollower } from '../dataplane/emulator-status.js';
import type { LioFcDriver } from './lio-driver.js';
import { fcPlan } from './fc-plan.js';
import { iscsiAccessList, readChapSecrets } from './iscsi-access-list.js';
import { lunTable } from './lun-table.js';

const KEY = 'fabric';
const NO_HBA_DETAIL = 'No Fibre Channel HBA on this node; hosts reach the libraries over iSCSI.';

/** The fabric state a node reports before its first pass. */
export function initialFabricStatus(): NodeFabricStatus {
  return {
    fc: {
      no_hba: true,
      verified: false,
      detail: 'not checked yet',
      verified_at: '',
      generation: -1,
      ports: [],
      luns: [],
      acls: [],
    },
    iscsi_logins: [],
    iscsi_access: [],
    registry_revision: '',
    error: '',
  };
}

/**
 * Applies the initiator registry and `fc.disabled_ports` to this node's fabrics, level-triggered:
 * FC through the LIO driver (rebuilt once per data-plane generation, changed objects only
 * otherwise) and iSCSI by pushing the registry to the emulator. Each pass also reads back the
 * kernel (ports, ACLs, sessions) for the node status, and records how far the registry is applied.
 */
export async function startFabricReconciler(opts: {
  store: Store;
  journal: EventJournal;
  node: string;
  supervisor: EmulatorSupervisor;
  driver: LioFcDriver;
  logger: Logger;
  report: (status: NodeFabricStatus) => void;
}) {
  const { store, supervisor, driver, logger } = opts;
  let status = initialFabricStatus();
  let builtGeneration = -1;
  let pushed = '';
  let lastState = '';
  const follower = new EmulatorStatusFollower();

  const pass = async () => {
    // The list's revision covers every registry and settings write this pass can see.
    const records = await store.list(keys.initiators.prefix, InitiatorRecord);
    // Read after the registry: every secret written at or before its revision is in here.
    const secrets = await readChapSecrets(store);
    const settings = (await store.get(keys.settings, Settings))?.value ?? {};
    const emulator = supervisor.emulator;
    const seen = emulator ? await follower.read(emulator) : undefined;
    const luns = lunTable(seen?.libraries ?? []);
    const served = [...new Set(luns.map((l) => l.library))];
    const initiators = records.items.map((i) => i.value);
    const plan = fcPlan(initiators, settings['fc.disabled_ports'] ?? '', luns);
    const problems: string[] = [];
    let verifyProblems: string[] = [];
    const generation = supervisor.status.generation;
    if (emulator) {
      const rebuild = generation !== builtGeneration;
      problems.push(...(await driver.apply(plan, { rebuild })));
      if (rebuild) builtGeneration = generation;
      verifyProblems = await driver.verify(plan);

      const { access, problems: chapProblems } = iscsiAccessList(initiators, secrets, served);
      problems.push(...chapProblems);
      // Hashed: the pushed list holds CHAP secrets, which stay out of anything kept around.
      const key = createHash('sha256')
        .update(`${supervisor.status.pid}:${JSON.stringify(access)}`)
        .digest('hex');
      if (key !== pushed) {
        await emulator.setAccess({ initiators: access }).then(
          () => {
            pushed = key;
            // The node status shows who has access to what, never the credentials.
            status.iscsi_access = access.map(({ name, libraries }) => ({ name, libraries }));
          },
          (err: Error) => problems.push(`iSCSI registry not pushed to the emulator: ${err.message}`),
        );
      }
    }
    const seenFc = await driver.observe();
    const noHba = seenFc.ports.length === 0;
    const verified = !noHba && emulator !== undefined && problems.length === 0 && verifyProblems.length === 0;
    const detail = noHba
      ? NO_HBA_DETAIL
      : !emulator
        ? 'The tape emulator is not running; the FC target waits for it.'
        : verified
          ? `${seenFc.built.size} port(s) serving ${luns.length} LUNs; ${plan.acls.length} initiator(s) registered`
          : [...problems, ...verifyProblems].join('; ');
    status = {
      ...status,
      fc: {
        no_hba: noHba,
        verified,
        detail,
        verified_at: verified
          ? status.fc.verified
            ? status.fc.verified_at
            : isoNow()
          : status.fc.verified_at,
        generation: builtGeneration,
        ports: seenFc.ports.map((p) => ({
          ...p,
          serving: !plan.disabled.has(p.wwpn),
          built: seenFc.built.has(p.wwpn),
        })),
        luns: luns.map(({ lun, backstore, device, library }) => ({ lun, backstore, device, library })),
        acls: seenFc.acls,
      },
      iscsi_logins: seen?.iscsi_logins ?? [],
      registry_revision: records.revision,
      error: problems.join('; '),
    };
    if (!emulator) status.iscsi_access = [];
    const state = `${verified}:${detail}`;
    if (state !== lastState && !(noHba && lastState === '')) {
      lastState = state;
      opts.journal.record({
        kind: 'fc_state',
        subject: opts.node,
        detail,
        data: { verified, no_hba: noHba },
      });
    } else lastState = state;
    if (problems.length > 0) logger.warn({ problems }, 'fabric apply incomplete');
    opts.report(status);
  };

  const controller = startController<string>({
    name: 'fabric',
    logger,
    reconcile: async () => {
      await pass();
      // Sessions come and go without a record changing: read them back every second.
      return { requeueAfterMs: Requeue.soon };
    },
  });
  const watches: Informer<unknown>[] = [
    await watchInto(store, keys.initiators.prefix, z.unknown(), controller.queue, () => KEY),
    await watchInto(store, keys.settings, z.unknown(), controller.queue, () => KEY),
    await watchInto(store, keys.initiatorSecrets.prefix, z.unknown(), controller.queue, () => KEY),
  ];
  controller.queue.add(KEY);
  return {
    /** Runs a pass soon (the data plane changed). */
    resync: () => controller.queue.add(KEY),
    stop: async () => {
      for (const w of watches) await w.close();
      await controller.stop();
    },
  };
}
