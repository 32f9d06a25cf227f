import type { Store } from '@vtl/store';
import type { Logger } from 'pino';

/** Options of runWhileLeader(). */
export interface LeaderOptions {
  store: Store;
  election: string;
  candidateId: string;
  ttlSec: number;
  logger: Logger;
  /** Runs while this process leads; must return soon after signal aborts. */
  lead: (signal: AbortSignal) => Promise<void>;
}

const MAX_BACKOFF_MS = 5_000;

/**
 * Campaigns, runs lead(signal) while elected, and on lost leadership aborts the signal,
 * waits for lead to settle and campaigns again. stop() resigns.
 */
export function runWhileLeader(opts: LeaderOptions): { stop(): Promise<void> } {
  const log = opts.logger.child({ election: opts.election, candidate: opts.candidateId });
  const stopping = new AbortController();
  let leading: AbortController | undefined;

  async function loop(): Promise<void> {
    let backoffMs = 100;
    while (!stopping.signal.aborted) {
      let leadership;
      try {
        leadership = await opts.store.campaign(opts.election, opts.candidateId, opts.ttlSec, {
          signal: stopping.signal,
        });
      } catch (err) {
        if (stopping.signal.aborted) return;
        log.warn({ err }, 'campaign failed; retrying');
        await pause(backoffMs, stopping.signal);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        continue;
      }
      backoffMs = 100;
      const term = new AbortController();
      const signal = term.signal;
      leading = term;
      leadership.onLost(() => term.abort(new Error('leadership lost')));
      if (stopping.signal.aborted) term.abort(new Error('stopping'));
      log.info('leading');
      try {
        await opts.lead(signal);
        if (!signal.aborted) log.warn('lead returned while still leader; stepping down');
      } catch (err) {
        if (!signal.aborted) log.error({ err }, 'lead failed; stepping down');
      }
      leading = undefined;
      // Resign in every case so a rival need not wait for our lease to expire.
      await leadership.resign().catch((err: unknown) => log.warn({ err }, 'resign failed'));
      log.info('no longer leading');
      if (!signal.aborted && !stopping.signal.aborted) await pause(backoffMs, stopping.signal);
    }
  }

  const running = loop();
  return {
    async stop() {
      stopping.abort(new Error('stopping'));
      leading?.abort(new Error('stopping'));
      await running;
    },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
