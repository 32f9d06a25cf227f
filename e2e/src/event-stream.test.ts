import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventJournal, Store } from '@vtl/store';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';
import { EventStream } from './harness/event-stream.js';

/** The 20-second keepalive of §6.1, shortened so the test sees several. */
const KEEPALIVE_MS = 300;
const KINDS = ['pool_created', 'pool_removed', 'test_marker', 'emu_media_error'];

describe('the event journal and its live stream', () => {
  let app: Appliance;
  let stream: EventStream;
  let store: Store;
  let journal: EventJournal;

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_SSE_KEEPALIVE_MS: String(KEEPALIVE_MS) } });
    // Another process writing the journal (the controller or a nodeagent would).
    store = await app.connectStore();
    journal = new EventJournal(store);
  });
  afterAll(async () => {
    stream?.close();
    await store?.close();
    await app?.destroy();
  });

  const kinds = () => stream.events.map((e) => `${e.type} ${e.data.subject}`);

  it('acknowledges a connection with a comment and keeps it alive with comments', async () => {
    stream = new EventStream(app.api.baseUrl, app.api.token, KINDS);
    await waitFor(async () => (stream.raw[0] ?? '').split(': keepalive').length > 3, { timeoutMs: 5_000 });
    const raw = stream.raw[0] as string;
    expect(raw.startsWith(':')).toBe(true);
    expect(raw.split('\n')[0]).toMatch(/^: connected/);
  });

  it('sends each event with its kind as the event name, in order, diffs only', async () => {
    expect(stream.events).toEqual([]); // nothing from before the connection
    const pools = [];
    for (const name of ['sse-a', 'sse-b']) {
      const res = await app.api.post('/api/pools', { name, path: path.join(app.stateDir, 'pools', name) });
      expect(res.status).toBe(201);
      pools.push(res.body);
    }
    expect((await app.api.delete(`/api/pools/${pools[0].id}`)).status).toBe(200);
    await waitFor(async () => stream.events.length >= 3, { timeoutMs: 5_000 });
    expect(kinds()).toEqual(['pool_created sse-a', 'pool_created sse-b', 'pool_removed sse-a']);
    const [first] = stream.events;
    expect(Object.keys(first?.data ?? {}).sort()).toEqual(['data', 'kind', 'severity', 'subject', 'ts']);
    expect(first?.data).toMatchObject({ kind: 'pool_created', subject: 'sse-a', severity: 'info' });
    expect(Date.parse(first?.data.ts)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('reconnects after the apiserver restarts and delivers what happened meanwhile, in order', async () => {
    await app.restartProcess('apiserver/dist/server.js');
    await journal.emit({ kind: 'test_marker', subject: 'during-outage' });
    await waitFor(async () => stream.raw.length >= 2 && kinds().includes('test_marker during-outage'), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    await journal.emit({ kind: 'test_marker', subject: 'after-reconnect' });
    await waitFor(async () => kinds().includes('test_marker after-reconnect'), { timeoutMs: 5_000 });
    expect(kinds().slice(3)).toEqual(['test_marker during-outage', 'test_marker after-reconnect']);
    expect(stream.raw[1]?.startsWith(': connected')).toBe(true);
  });

  it("gives each event the API's severity, in the stream and in the lists", async () => {
    await journal.emit({
      kind: 'emu_media_error',
      subject: 'SEV001L8',
      detail: 'drive 0 could not mount SEV001L8: image unreadable',
      data: { library: 1, drive: 0 },
    });
    await journal.emit({
      kind: 'job_update',
      subject: 'job:9001',
      detail: 'export SEV001L8: cancelled',
      data: { id: 9001, state: 'cancelled' },
    });
    await waitFor(async () => kinds().includes('emu_media_error SEV001L8'), { timeoutMs: 5_000 });
    expect(stream.events.find((e) => e.data.subject === 'SEV001L8')?.data.severity).toBe('error');
    const listed = (await app.api.get('/api/events/search?q=SEV001L8')).body;
    expect(listed.map((e: any) => `${e.kind} ${e.severity}`)).toEqual([
      'job_update warning',
      'emu_media_error error',
    ]);
  });

  it('lists the 200 newest events newest first and searches by substring, kind and limit', async () => {
    for (let i = 0; i < 520; i++) await journal.emit({ kind: 'bulk', subject: `n${i}`, detail: `bulk ${i}` });
    const recent = (await app.api.get('/api/events/recent')).body;
    expect(recent).toHaveLength(200);
    expect(recent[0]).toMatchObject({ kind: 'bulk', subject: 'n519' });
    expect(Object.keys(recent[0]).sort()).toEqual(['detail', 'id', 'kind', 'severity', 'subject', 'ts']);
    expect(recent[0].severity).toBe('info');
    expect(recent.map((e: any) => e.id)).toEqual([...recent.map((e: any) => e.id)].sort((a, b) => b - a));

    const search = async (query: string) => (await app.api.get(`/api/events/search${query}`)).body;
    expect(await search('')).toHaveLength(500);
    expect((await search('?kind=all&limit=3')).map((e: any) => e.subject)).toEqual(['n519', 'n518', 'n517']);
    const sseA = (await search('?q=SSE-A')).map((e: any) => `${e.kind} ${e.subject}`);
    expect(sseA.every((e: string) => e.endsWith(' sse-a'))).toBe(true);
    expect(sseA.filter((e: string) => !e.startsWith('pool_stats'))).toEqual([
      'pool_removed sse-a',
      'pool_created sse-a',
    ]);
    // The nodeagent reports pool figures as pool_stats (§6.2).
    expect((await search('?kind=pool_stats&q=default'))[0]?.detail).toMatch(/% used/);
    expect((await search('?kind=pool_created')).map((e: any) => e.subject)).toEqual([
      'sse-b',
      'sse-a',
      'default',
    ]);
    expect((await search('?q=bulk 51&kind=bulk&limit=5')).map((e: any) => e.subject)).toEqual([
      'n519',
      'n518',
      'n517',
      'n516',
      'n515',
    ]);
    expect((await search('?kind=test_marker&q=outage')).map((e: any) => e.subject)).toEqual([
      'during-outage',
    ]);
    expect((await app.api.get('/api/events/search?limit=0')).status).toBe(400);
    // No maximum in the spec: "everything" is what the journal holds.
    const everything = await app.api.get('/api/events/search?limit=1000000');
    expect(everything.status).toBe(200);
    expect(everything.body.length).toBeGreaterThan(500);
  });
});
