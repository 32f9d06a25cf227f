import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeStandIn } from './kube-standin.js';

// The stand-in must behave as a kube-apiserver does where the adapter relies on it; these pin
// the protocol rules it claims (kube-standin.ts), with plain HTTP as kubectl would send it.

const BASE = '/apis/vtl.appliance.io/v1alpha1/namespaces/ns/tapepools';

describe('the test-only kube-apiserver stand-in', () => {
  const kube = new KubeStandIn('token', 50);
  const call = async (method: string, path: string, body?: unknown, token = 'token') => {
    const res = await fetch(`${kube.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Reads watch events until `count` arrived, or `enough` says so (or the stream ended). */
  const watch = async (query: string, count: number, enough?: (events: any[]) => boolean) => {
    const res = await fetch(`${kube.url}${BASE}?watch=true&${query}`, {
      headers: { authorization: 'Bearer token' },
    });
    const reader = res.body!.getReader();
    const events: any[] = [];
    let text = '';
    while (enough ? !enough(events) : events.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
      const lines = text.split('\n');
      text = lines.pop()!;
      events.push(...lines.filter(Boolean).map((l) => JSON.parse(l)));
    }
    await reader.cancel();
    return events;
  };

  beforeAll(() => kube.start());
  afterAll(() => kube.stop());

  it('refuses a request without the token, and a second create of a name', async () => {
    expect((await call('GET', BASE, undefined, 'wrong')).status).toBe(401);
    const pool = {
      apiVersion: 'vtl.appliance.io/v1alpha1',
      kind: 'TapePool',
      metadata: { name: 'a' },
      spec: { path: '/a' },
      status: { id: 7 },
    };
    const created = await call('POST', BASE, pool);
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({
      generation: 1,
      resourceVersion: expect.any(String),
      uid: expect.any(String),
    });
    expect(created.body.status).toBeUndefined(); // status is the subresource's
    expect((await call('POST', BASE, pool)).body).toMatchObject({ code: 409, reason: 'AlreadyExists' });
  });

  it('moves generation on spec changes only; status only through /status; stale writes conflict', async () => {
    const a = (await call('GET', `${BASE}/a`)).body;
    const labelled = (
      await call('PUT', `${BASE}/a`, {
        ...a,
        metadata: { ...a.metadata, labels: { x: 'y' } },
        status: { id: 1 },
      })
    ).body;
    expect(labelled.metadata.generation).toBe(1);
    expect(labelled.status).toBeUndefined();
    const status = (
      await call('PUT', `${BASE}/a/status`, { ...labelled, spec: { path: '/ignored' }, status: { id: 3 } })
    ).body;
    expect(status).toMatchObject({ spec: { path: '/a' }, status: { id: 3 }, metadata: { generation: 1 } });
    expect((await call('PUT', `${BASE}/a`, { ...labelled, spec: { path: '/b' } })).body).toMatchObject({
      code: 409,
      reason: 'Conflict',
    });
    const moved = (await call('PUT', `${BASE}/a`, { ...status, spec: { path: '/b' } })).body;
    expect(moved).toMatchObject({ metadata: { generation: 2 }, status: { id: 3 } });
  });

  it('lists with a resourceVersion and watches from it, with bookmarks when asked', async () => {
    const list = (await call('GET', BASE)).body;
    expect(list).toMatchObject({
      kind: 'TapePoolList',
      items: [expect.objectContaining({ metadata: expect.objectContaining({ name: 'a' }) })],
    });
    const rv = list.metadata.resourceVersion;
    // Bookmarks come every 500 ms on an idle watch, so one may come before the create on a busy
    // machine: read until the create and a bookmark after it arrived.
    const addedIndex = (events: any[]) => events.findIndex((e) => e.type === 'ADDED');
    const pending = watch(
      `resourceVersion=${rv}&allowWatchBookmarks=true`,
      0,
      (events) =>
        addedIndex(events) >= 0 && events.slice(addedIndex(events)).some((e) => e.type === 'BOOKMARK'),
    );
    await new Promise((r) => setTimeout(r, 20));
    await call('POST', BASE, {
      apiVersion: 'vtl.appliance.io/v1alpha1',
      kind: 'TapePool',
      metadata: { name: 'b' },
      spec: { path: '/c' },
    });
    const events = await pending;
    const added = events[addedIndex(events)];
    expect(added).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
    // Nothing but bookmarks around it, and the one after it carries a newer resourceVersion.
    expect(events.filter((e) => e !== added).every((e) => e.type === 'BOOKMARK')).toBe(true);
    const bookmark = events.slice(addedIndex(events)).find((e) => e.type === 'BOOKMARK');
    expect(bookmark).toMatchObject({
      type: 'BOOKMARK',
      object: { kind: 'TapePool', metadata: { resourceVersion: expect.any(String) } },
    });
    expect(Number(bookmark.object.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
  });

  it('answers a watch from a compacted resourceVersion with a 410 ERROR event', async () => {
    const rv = (await call('GET', BASE)).body.metadata.resourceVersion;
    kube.expireHistory();
    const [event] = await watch(`resourceVersion=${rv}`, 1);
    expect(event).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('only marks an object with finalizers on delete, and removes it when they are gone', async () => {
    const a = (await call('GET', `${BASE}/a`)).body;
    const held = (await call('PUT', `${BASE}/a`, { ...a, metadata: { ...a.metadata, finalizers: ['x/y'] } }))
      .body;
    const marked = (await call('DELETE', `${BASE}/a`)).body;
    expect(marked.metadata.deletionTimestamp).toBeTruthy();
    expect((await call('GET', `${BASE}/a`)).status).toBe(200);
    await call('PUT', `${BASE}/a`, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect((await call('GET', `${BASE}/a`)).status).toBe(404);
    expect(held.metadata.generation).toBe(2);
  });
});
