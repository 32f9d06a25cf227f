/** The longest pause between two failed re-lists: etcd back after an outage is noticed soon. */
const MAX_RELIST_BACKOFF_MS = 5_000;

/** What a list-then-watch reader (informer, watch cache) hands the shared re-list loop. */
export interface RelistLoop {
  closed(): boolean;
  /** One re-list and re-watch; a throw is retried after a doubling pause. */
  attempt(): Promise<void>;
  failed(err: unknown): void;
  /** Keeps the function that ends the current pause early, so close() does not wait it out. */
  setWake(wake: () => void): void;
}

/** Re-lists until one attempt succeeds or the reader closes, backing off 100 ms → 5 s. */
export async function relistUntilDone(loop: RelistLoop): Promise<void> {
  let backoffMs = 100;
  while (!loop.closed()) {
    try {
      await loop.attempt();
      return;
    } catch (err) {
      loop.failed(err);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs);
        loop.setWake(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      backoffMs = Math.min(backoffMs * 2, MAX_RELIST_BACKOFF_MS);
    }
  }
}
