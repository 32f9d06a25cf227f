/**
 * Issue 35's measurement, shared by the freeze tests at every level (the store's member pool,
 * the appliance on a cluster of etcd processes, the image's containers): calls started at a
 * steady pace before, during and after one etcd member is hung, and the longest time without a
 * healthy answer while it was.
 */

/** How often a call of the load starts, whatever the earlier ones are doing. */
const CALL_EVERY_MS = 100;
/** How often the live members are asked whether they follow a new leader, while one is hung. */
const ELECTION_POLL_MS = 50;

/** What one freeze cost, as the load saw it. */
export interface FreezeOutcome {
  /** The longest time between the freeze and the thaw without a healthy answer. */
  gapMs: number;
  /**
   * How long after the freeze a live member first named a leader other than the hung one:
   * etcd's own election, which no client can beat. Undefined when not asked or not seen.
   */
  electedAfterMs: number | undefined;
  /** What each refused or failed call said. */
  refused: string[];
  /** When each call of `refused` started, in the same order. */
  refusedStartedAt: number[];
  /** Calls started (numbered from 0). */
  calls: number;
  /** Calls answered healthily. */
  answered: number;
  frozeAt: number;
  thawedAt: number;
}

/** The longest time between `from` and `to` without an entry of `times`. */
export function longestGap(times: number[], from: number, to: number): number {
  const inside = [from, ...times.filter((t) => t > from && t < to).sort((a, b) => a - b), to];
  return Math.max(...inside.slice(1).map((t, i) => t - inside[i]!));
}

/**
 * Starts `call(i)` every CALL_EVERY_MS, hangs a member with `freeze` for `freezeMs` after
 * `settleMs`, thaws it and goes on for `settleMs` more, then waits for every call. A call
 * resolves with undefined for a healthy answer or with what it was told instead; a throw counts
 * as refused. `newLeader`, polled while the member is hung, tells whether a live member follows
 * a leader other than the hung one.
 */
export async function freezeUnderLoad(opts: {
  freeze: () => Promise<void> | void;
  thaw: () => Promise<void> | void;
  freezeMs: number;
  call: (i: number) => Promise<string | undefined>;
  newLeader?: () => Promise<boolean>;
  settleMs?: number;
}): Promise<FreezeOutcome> {
  const settleMs = opts.settleMs ?? 1_000;
  const healthy: number[] = [];
  const refused: string[] = [];
  const refusedStartedAt: number[] = [];
  const calls: Promise<void>[] = [];
  let stop = false;
  const load = (async () => {
    for (let i = 0; !stop; i++) {
      const startedAt = Date.now();
      const refuse = (why: string) => {
        refused.push(why);
        refusedStartedAt.push(startedAt);
      };
      calls.push(
        opts.call(i).then(
          (why) => void (why === undefined ? healthy.push(Date.now()) : refuse(why)),
          (err: unknown) => refuse(String(err)),
        ),
      );
      await sleep(CALL_EVERY_MS);
    }
  })();
  await sleep(settleMs);
  const frozeAt = Date.now();
  let thawed = false;
  let electedAt: number | undefined;
  let polling: Promise<void> = Promise.resolve();
  try {
    await opts.freeze();
    const newLeader = opts.newLeader;
    if (newLeader)
      polling = (async () => {
        while (!thawed && electedAt === undefined) {
          if (await newLeader().catch(() => false)) electedAt ??= Date.now();
          else await sleep(ELECTION_POLL_MS);
        }
      })();
    await sleep(opts.freezeMs);
  } finally {
    await opts.thaw();
  }
  const thawedAt = Date.now();
  thawed = true;
  await polling;
  await sleep(settleMs);
  stop = true;
  await load;
  await Promise.all(calls);
  return {
    gapMs: longestGap(healthy, frozeAt, thawedAt),
    electedAfterMs: electedAt === undefined ? undefined : electedAt - frozeAt,
    refused,
    refusedStartedAt,
    calls: calls.length,
    answered: healthy.length,
    frozeAt,
    thawedAt,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Issue 35: at most this long without a healthy answer per freeze. */
export const MAX_FREEZE_GAP_MS = 2_000;
/**
 * With the etcd leader hung nothing can answer before the others elect a new one (1-2 s with
 * etcd's default 1 s election timeout, longer on a loaded machine); the client's part is what
 * comes after, and it gets at most this much.
 */
export const MAX_GAP_AFTER_ELECTION_MS = 1_000;

/**
 * The most a freeze may cost: MAX_FREEZE_GAP_MS, or etcd's own election plus
 * MAX_GAP_AFTER_ELECTION_MS when that is later.
 */
export function freezeGapBound(outcome: Pick<FreezeOutcome, 'electedAfterMs'>): number {
  return Math.max(MAX_FREEZE_GAP_MS, (outcome.electedAfterMs ?? 0) + MAX_GAP_AFTER_ELECTION_MS);
}

/**
 * The refusals no etcd election excuses: a call that started `deadlineMs` −
 * MAX_GAP_AFTER_ELECTION_MS or less before a new etcd leader was elected had at least
 * MAX_GAP_AFTER_ELECTION_MS of its deadline left after the election, enough to be answered.
 * Earlier ones could only wait for etcd (a slow election on a loaded machine) and may be refused.
 */
export function unexcusedRefusals(
  outcome: Pick<FreezeOutcome, 'refused' | 'refusedStartedAt' | 'electedAfterMs' | 'frozeAt'>,
  deadlineMs: number,
): string[] {
  const electedAt =
    outcome.electedAfterMs === undefined ? undefined : outcome.frozeAt + outcome.electedAfterMs;
  const lastExcusedStart =
    electedAt === undefined ? -Infinity : electedAt - (deadlineMs - MAX_GAP_AFTER_ELECTION_MS);
  return outcome.refused.filter((_, i) => !((outcome.refusedStartedAt[i] ?? Infinity) < lastExcusedStart));
}
