import fs from 'node:fs/promises';
import os from 'node:os';
import { keys } from '@vtl/api';
import type { Lease, Store } from '@vtl/store';
import { identify, stillRuns } from '@vtl/reconcile';
import type { Logger } from 'pino';
import { z } from 'zod';

/** The claim ends this long after its nodeagent died without releasing it. */
export const CLAIM_TTL_SEC = 10;
const POLL_MS = 500;

const Holder = z.object({
  pid: z.number(),
  host: z.string(),
  started: z.string(),
  since: z.string(),
  /** The pid namespace: a pid means something only inside it (containers share host names). */
  pidns: z.string().default(''),
});
type Holder = z.infer<typeof Holder>;

/** This node's claim, held under its own lease until release(). */
export interface NodeClaim {
  release(): Promise<void>;
}

/**
 * Makes this process the one nodeagent of `node`: a leased record that a second nodeagent for
 * the same node finds and waits on (two would fight over the emulator, the iSCSI port and the
 * node's status). A holder on this host (and pid namespace) that no longer runs (same pid,
 * other start time, or gone) is taken over at once instead of after its lease runs out.
 */
export async function claimNode(
  store: Store,
  node: string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<NodeClaim> {
  const key = keys.nodeagentClaim(node);
  const me = await identify(process.pid);
  const holder: Holder = {
    pid: process.pid,
    host: os.hostname(),
    started: me?.started ?? '',
    since: new Date().toISOString(),
    pidns: await fs.readlink('/proc/self/ns/pid').catch(() => ''),
  };
  let lease = await store.lease(CLAIM_TTL_SEC);
  let released = false;
  let warned = false;

  const take = async (): Promise<void> => {
    for (;;) {
      signal?.throwIfAborted();
      if (await store.create(key, holder, { lease })) return;
      const current = await store.get(key, Holder);
      if (!current) continue;
      const other = current.value;
      if (other.host === holder.host && other.pid === holder.pid && other.started === holder.started) {
        // Ours from before a lost lease (a stall): move it under the new lease.
        if (await store.casPut(key, holder, current.modRevision, { lease })) return;
        continue;
      }
      const sameHost = other.host === holder.host && other.pidns === holder.pidns && holder.pidns !== '';
      if (sameHost && !(await stillRuns({ pid: other.pid, started: other.started }))) {
        logger.warn({ holder: other }, 'the nodeagent that held this node is gone; taking over');
        await store.delete(key, { modRevision: current.modRevision });
        continue;
      }
      if (!warned) {
        warned = true;
        logger.warn(
          { holder: other },
          `Another nodeagent serves node "${node}" (pid ${other.pid} on ${other.host} since ${other.since}); ` +
            `waiting until it stops (its claim ends at most ${CLAIM_TTL_SEC} s after it dies). ` +
            'If two were started for one node by mistake, stop one of them or give this one another VTL_NODE.',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  const keep = (l: Lease) =>
    l.onLost(() => {
      if (released) return;
      // A stall cost the lease: take the claim back under a new one, unless another took the node.
      logger.warn('node claim lease lost; claiming the node again');
      void (async () => {
        for (;;) {
          if (released) return;
          try {
            lease = await store.lease(CLAIM_TTL_SEC);
            warned = true; // a takeover below is an error, not a wait
            const current = await store.get(key, Holder);
            if (current && current.value.pid !== holder.pid) {
              logger.fatal(
                { holder: current.value },
                `Another nodeagent took node "${node}" while this one was cut off from etcd; exiting.`,
              );
              process.exit(75);
            }
            await take();
            keep(lease);
            logger.info('node claimed again');
            return;
          } catch (err) {
            logger.warn({ err }, 'claiming the node again failed; retrying');
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
        }
      })();
    });

  await take();
  keep(lease);
  logger.info('node claimed');
  return {
    release: async () => {
      released = true;
      await lease.revoke();
    },
  };
}
