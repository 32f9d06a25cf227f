import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { watchInto } from './informer.js';
import { waitFor } from './wait.js';
import { WorkQueue } from './work-queue.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const Job = z.object({ library: z.number() });

const env = useTestStore();

/** Drains what the queue holds now. */
async function drain(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const k = (await q.get())!;
    out.push(k);
    q.done(k);
  }
  return out.sort();
}

describe('watchInto', () => {
  it('enqueues mapped keys for the initial listing, puts and deletes (with the last value)', async () => {
    await env.store.put('/t/jobs/1', { library: 7 });
    await env.store.put('/t/jobs/2', { library: 8 });
    const q = new WorkQueue();
    const informer = await watchInto(env.store, '/t/jobs/', Job, q, (_key, job) =>
      job ? `lib/${job.library}` : undefined,
    );
    expect(await drain(q)).toEqual(['lib/7', 'lib/8']);

    await env.store.put('/t/jobs/3', { library: 9 });
    await waitFor(() => q.length === 1);
    expect(await drain(q)).toEqual(['lib/9']);

    await env.store.delete('/t/jobs/1');
    await waitFor(() => q.length === 1);
    expect(await drain(q)).toEqual(['lib/7']);
    await informer.close();
  });

  it('accepts several keys or none from keyOf', async () => {
    const q = new WorkQueue();
    const informer = await watchInto(env.store, '/t/multi/', Job, q, (key, job) =>
      key.endsWith('skip') ? undefined : [`a/${job?.library}`, `b/${job?.library}`],
    );
    await env.store.put('/t/multi/skip', { library: 1 });
    await env.store.put('/t/multi/x', { library: 2 });
    await waitFor(() => q.length === 2);
    expect(await drain(q)).toEqual(['a/2', 'b/2']);
    await informer.close();
  });
});
