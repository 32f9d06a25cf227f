import fs from 'node:fs/promises';
import { PoolSpec, PoolStatus, keys, type DedupStatus, type PoolFigures } from '@vtl/api';
import { EventJournal, type Lease, type Store } from '@vtl/store';
import { publishPoolStatus, removePoolStatus } from '@vtl/domain';
import { Requeue, startController, watchInto, type ReconcileResult } from '@vtl/reconcile';
import type { Logger } from 'pino';
import { directoryPoolFigures } from './pool-figures.js';
import { btrfsPoolFigures, ensurePoolSubvolume, removeOrphanSubvolumes } from '../storage/btrfs-pool.js';

/**
 * Figures are refreshed every 5 s, or less often when walks are long: a walk stats every file
 * of every cartridge (a full 16 × 400-cartridge appliance: 24,000 files), so the pause after a
 * pool's walk is 100 × its duration × the node's pools, up to a minute, which keeps all the
 * node's walks together near 1 % of a core. The status record is written only when the
 * figures change.
 */
const POOL_REFRESH_MS = Requeue.poll;
/** The longest pause between walks unless VTL_POOL_REFRESH_MAX_MS says otherwise (tests shorten it). */
export const POOL_REFRESH_MAX_MS = 60_000;
const WALK_SHARE = 100;
export const refreshAfter = (walkMs: number, pools: number, maxMs = POOL_REFRESH_MAX_MS) =>
  Math.min(maxMs, Math.max(POOL_REFRESH_MS, Math.round(walkMs * WALK_SHARE * pools)));
/** pool_stats events (§6.2) at most this often per pool, and only when the figures changed. */
const POOL_STATS_EVERY_MS = 60_000;

const sameFigures = (a?: PoolFigures, b?: PoolFigures) =>
  JSON.stringify({ ...a, collected_at: '' }) === JSON.stringify({ ...b, collected_at: '' });

/** Keeps the status of every pool on this node: directory present, figures current. */
export async function startPoolReconciler(opts: {
  store: Store;
  lease: Lease;
  node: string;
  /** The node's shared storage (btrfs pools are its subvolumes). */
  storageMount: string;
  /** The node's dedup pass, shown in its btrfs pools' figures. */
  dedup?: () => DedupStatus | undefined;
  /** The longest pause between a pool's walks (VTL_POOL_REFRESH_MAX_MS); default a minute. */
  refreshMaxMs?: number;
  logger: Logger;
}) {
  const { store, lease, node, storageMount } = opts;
  const published = new Map<number, PoolStatus>();
  const journal = new EventJournal(store);
  const statsAt = new Map<number, { at: number; figures: PoolFigures }>();
  /** This node's pools, which share the walks' budget. */
  const walked = new Set<string>();

  /** The periodic capacity and dedup figures of §6.2, throttled so they cannot flood the journal. */
  async function emitStats(pool: PoolSpec, figures: PoolFigures | undefined) {
    const last = statsAt.get(pool.id);
    if (
      !figures ||
      (last && (Date.now() - last.at < POOL_STATS_EVERY_MS || sameFigures(last.figures, figures)))
    )
      return;
    statsAt.set(pool.id, { at: Date.now(), figures });
    const { name: _name, ...data } = figures;
    const used = figures.fs_total_bytes
      ? Math.round((100 * figures.fs_used_bytes) / figures.fs_total_bytes)
      : 0;
    await journal.emit({
      kind: 'pool_stats',
      subject: pool.name,
      detail: `${used}% used, dedup ${figures.dedup_ratio}x, compression ${figures.compress_ratio}x`,
      data,
    });
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const read = await store.get(key, PoolSpec);
    const id = Number.parseInt(key.slice(keys.pools.prefix.length), 10);
    if (!read || read.value.node !== node) {
      walked.delete(key);
      if (!read) {
        published.delete(id);
        statsAt.delete(id);
        await removePoolStatus(store, id, node);
        await removeGoneSubvolumes();
      }
      return;
    }
    const pool = read.value;
    walked.add(key);
    let status: PoolStatus;
    const walkStarted = performance.now();
    const onStorage = pool.engine === 'btrfs';
    try {
      let figures: PoolFigures;
      if (onStorage) {
        await ensurePoolSubvolume(pool, storageMount);
        figures = await btrfsPoolFigures(pool, storageMount, opts.dedup?.());
      } else {
        await fs.mkdir(pool.path, { recursive: true });
        figures = await directoryPoolFigures(pool);
      }
      status = {
        id: pool.id,
        node,
        state: 'active',
        detail: onStorage ? `btrfs subvolume, compression ${pool.compression ?? 'zstd:3'}` : 'ready',
        figures,
      };
    } catch (err) {
      status = {
        id: pool.id,
        node,
        state: 'error',
        detail: onStorage
          ? `Cannot use ${pool.path}: ${(err as Error).message}.`
          : `Cannot use ${pool.path}: ${(err as Error).message}. Fix the directory or its permissions.`,
      };
    }
    const before = published.get(pool.id);
    if (
      !before ||
      before.state !== status.state ||
      before.detail !== status.detail ||
      !sameFigures(before.figures, status.figures)
    ) {
      // Written only while the spec is as read above: a pool deleted during the walk gets none
      // (its deletion queued this key again, and that pass removes what is left).
      if (!(await publishPoolStatus(store, read, status, lease))) return;
      published.set(pool.id, status);
    }
    await emitStats(pool, status.figures).catch((err) =>
      opts.logger.warn({ err }, 'pool_stats not recorded'),
    );
    return { requeueAfterMs: refreshAfter(performance.now() - walkStarted, walked.size, opts.refreshMaxMs) };
  }

  /** The disk part of a pool delete: subvolumes no pool names any more go. */
  async function removeGoneSubvolumes() {
    const pools = (await store.list(keys.pools.prefix, PoolSpec)).items.map((i) => i.value);
    const removed = await removeOrphanSubvolumes(
      storageMount,
      pools.filter((p) => p.node === node),
    );
    if (removed.length > 0) opts.logger.info({ removed }, 'deleted the subvolumes of deleted pools');
  }

  const controller = startController<string>({ name: 'pools', logger: opts.logger, reconcile });
  const informer = await watchInto(store, keys.pools.prefix, PoolSpec, controller.queue, (key, pool) =>
    !pool || pool.node === node ? key : undefined,
  );
  await removeGoneSubvolumes().catch((err) => opts.logger.warn({ err }, 'pool subvolumes not swept'));
  return {
    /** Writes every pool status again: they vanished with a lost lease. */
    republish: () => {
      published.clear();
      informer.items().forEach((_v, key) => controller.queue.add(key));
    },
    stop: async () => {
      await informer.close();
      await controller.stop();
    },
  };
}
