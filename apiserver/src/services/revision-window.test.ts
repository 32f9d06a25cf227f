import { describe, expect, it } from 'vitest';
import { RevisionWindow } from './revision-window.js';

/** A store whose revision reads the test answers by hand, on a clock the test moves. */
function fakeStore() {
  const pending: ((revision: string) => void)[] = [];
  let clock = 1_000;
  const window = new RevisionWindow(
    () => new Promise<string>((resolve) => pending.push(resolve)),
    50,
    () => clock,
  );
  return {
    window,
    pending,
    tick: (ms: number) => (clock += ms),
    now: () => clock,
    answer: async (revision: string) => {
      pending.shift()!(revision);
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('RevisionWindow', () => {
  it('serves every request of a window from one revision read', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    s.tick(1);
    const second = s.window.revision(s.now());
    expect(s.pending).toHaveLength(1); // the second joins the read in flight
    await s.answer('7');
    expect(await first).toBe('7');
    expect(await second).toBe('7');
    s.tick(10);
    expect(await s.window.revision(s.now())).toBe('7');
    expect(s.pending).toHaveLength(0);
  });

  it('never answers a revision read that began more than the window before the request', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    await s.answer('7');
    await first;
    s.tick(60);
    const later = s.window.revision(s.now());
    expect(s.pending).toHaveLength(1);
    await s.answer('9'); // a write happened meanwhile
    expect(await later).toBe('9');
  });

  it('a strict request waits for a read that began after it arrived', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    s.tick(1);
    const strict = s.window.revision(s.now(), true);
    expect(s.pending).toHaveLength(2); // the read in flight began before it
    await s.answer('7');
    await s.answer('8');
    expect(await first).toBe('7');
    expect(await strict).toBe('8');
  });

  it('reads ahead under a steady load, so requests do not wait at the window edge', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    s.tick(10); // a slow store: the read takes 10 ms
    await s.answer('7');
    await first;
    s.tick(5); // well inside the window: answered at once, no read sent
    expect(await s.window.revision(s.now())).toBe('7');
    expect(s.pending).toHaveLength(0);
    s.tick(10); // 25 ms after the read began, three slowest reads (30 ms) before the edge
    expect(await s.window.revision(s.now())).toBe('7');
    expect(s.pending).toHaveLength(1);
    await s.answer('8');
    s.tick(40); // 65 ms after the first read, 40 after the read-ahead
    expect(await s.window.revision(s.now())).toBe('8');
  });

  it('reads ahead late in the window when the store answers fast', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    s.tick(1);
    await s.answer('7');
    await first;
    s.tick(30); // 31 ms after the read began: nothing sent yet, the read answered in 1 ms
    expect(await s.window.revision(s.now())).toBe('7');
    expect(s.pending).toHaveLength(0);
    s.tick(16); // 47 ms: three slowest reads before the edge
    expect(await s.window.revision(s.now())).toBe('7');
    expect(s.pending).toHaveLength(1);
  });

  it('keeps reading ahead while a slow read is in flight, two at most', async () => {
    const s = fakeStore();
    const first = s.window.revision(s.now());
    s.tick(20); // a loaded store: 20 ms per read, so reads go ahead every quarter window
    await s.answer('7');
    await first;
    await s.window.revision(s.now()); // 20 ms after the read began: read-ahead 1
    s.tick(13);
    await s.window.revision(s.now()); // read-ahead 2, the first still in flight
    s.tick(13);
    await s.window.revision(s.now()); // due again, but two are in flight: no third
    expect(s.pending).toHaveLength(2);
    await s.answer('8');
    await s.answer('9');
    s.tick(20); // 66 ms after the first read, 33 after the second read-ahead
    expect(await s.window.revision(s.now())).toBe('9');
  });

  it('passes a failed read to the requests that wait for it, then reads again', async () => {
    let fail = true;
    const window = new RevisionWindow(() =>
      fail ? Promise.reject(new Error('etcd stalled')) : Promise.resolve('3'),
    );
    await expect(window.revision(performance.now())).rejects.toThrow('etcd stalled');
    fail = false;
    expect(await window.revision(performance.now())).toBe('3');
  });
});
