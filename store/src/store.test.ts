import { VtlError } from '@vtl/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestStore } from './testing/use-test-store.js';

const Counter = z.object({ n: z.number().int() });
const Named = z.object({ name: z.string() });

const env = useTestStore();

describe('Store reads and writes', () => {
  it('puts, gets and reports revisions', async () => {
    const rev = await env.store.put('/t/rw/a', { name: 'x' });
    const got = await env.store.get('/t/rw/a', Named);
    expect(got).toEqual({ key: '/t/rw/a', value: { name: 'x' }, modRevision: rev, createRevision: rev });
    expect(await env.store.get('/t/rw/missing', Named)).toBeUndefined();
  });

  it('get throws an internal VtlError naming the key when the record fails its schema', async () => {
    await env.store.put('/t/bad/one', { name: 42 });
    const err = await env.store.get('/t/bad/one', Named).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VtlError);
    expect((err as VtlError).code).toBe('internal');
    expect((err as VtlError).message).toContain('/t/bad/one');
  });

  it('lists sorted by key, skips invalid records, honours limit, reverse and after', async () => {
    for (const k of ['c', 'a', 'b', 'e']) await env.store.put(`/t/list/${k}`, { name: k });
    await env.store.put('/t/list/d', { wrong: true });
    await env.store.put('/t/listing-not-under-prefix', { name: 'z' });
    const all = await env.store.list('/t/list/', Named);
    expect(all.items.map((i) => i.value.name)).toEqual(['a', 'b', 'c', 'e']);
    expect(BigInt(all.revision)).toBeGreaterThanOrEqual(BigInt(all.items[3]!.modRevision));
    const rev = await env.store.list('/t/list/', Named, { reverse: true, limit: 2 });
    // d fails the schema: the limit counts it, the result skips it.
    expect(rev.items.map((i) => i.value.name)).toEqual(['e']);
    const after = await env.store.list('/t/list/', Named, { after: '/t/list/b' });
    expect(after.items.map((i) => i.value.name)).toEqual(['c', 'e']);
    const beforeC = await env.store.list('/t/list/', Named, { reverse: true, after: '/t/list/c' });
    expect(beforeC.items.map((i) => i.value.name)).toEqual(['b', 'a']);
    expect(await env.store.listKeys('/t/list/')).toEqual(
      ['a', 'b', 'c', 'd', 'e'].map((k) => `/t/list/${k}`),
    );
    expect(await env.store.count('/t/list/')).toBe(5);
  });

  it('lists a prefix larger than one page completely, at one revision', async () => {
    for (let start = 0; start < 1200; start += 100) {
      const txn = env.store.transaction();
      for (let i = start; i < start + 100; i++)
        txn.put(`/t/big/${String(i).padStart(5, '0')}`, { name: String(i) });
      expect(await txn.commit()).toBe(true);
    }
    const { items, revision } = await env.store.list('/t/big/', Named);
    expect(items).toHaveLength(1200);
    expect(items.map((i) => Number(i.value.name))).toEqual([...Array(1200).keys()]);
    // Written after the list's revision: must not show up in a listing pinned to it.
    expect(BigInt(items.at(-1)!.modRevision)).toBeLessThanOrEqual(BigInt(revision));
    const desc = await env.store.list('/t/big/', Named, { reverse: true });
    expect(desc.items[0]?.value.name).toBe('1199');
    expect(desc.items).toHaveLength(1200);
  });

  it('create is create-if-absent', async () => {
    const first = await env.store.create('/t/create/x', { name: 'first' });
    expect(first?.value).toEqual({ name: 'first' });
    expect(await env.store.create('/t/create/x', { name: 'second' })).toBeUndefined();
    expect((await env.store.get('/t/create/x', Named))?.value.name).toBe('first');
  });

  it('casPut writes only at the expected mod revision', async () => {
    const rev = await env.store.put('/t/cas/x', { name: 'v1' });
    expect(await env.store.casPut('/t/cas/x', { name: 'v2' }, rev)).toBe(true);
    expect(await env.store.casPut('/t/cas/x', { name: 'v3' }, rev)).toBe(false);
    expect((await env.store.get('/t/cas/x', Named))?.value.name).toBe('v2');
  });

  it('delete honours modRevision; deletePrefix removes only the prefix', async () => {
    const rev = await env.store.put('/t/del/a', { name: 'a' });
    await env.store.put('/t/del/a', { name: 'a2' });
    expect(await env.store.delete('/t/del/a', { modRevision: rev })).toBe(false);
    expect(await env.store.delete('/t/del/a')).toBe(true);
    expect(await env.store.delete('/t/del/a')).toBe(false);
    for (const k of ['x', 'y', 'z']) await env.store.put(`/t/delp/${k}`, { name: k });
    await env.store.put('/t/delpx', { name: 'keep' });
    expect(await env.store.deletePrefix('/t/delp/')).toBe(3);
    expect(await env.store.get('/t/delpx', Named)).toBeDefined();
    await expect(env.store.deletePrefix('')).rejects.toThrow(/whole key space/);
  });
});

describe('Store.update', () => {
  it('applies every one of many concurrent updates (no lost update)', async () => {
    await env.store.put('/t/upd/counter', { n: 0 });
    const bump = () => env.store.update('/t/upd/counter', Counter, (c) => ({ n: (c?.n ?? 0) + 1 }));
    await Promise.all(Array.from({ length: 20 }, bump));
    expect((await env.store.get('/t/upd/counter', Counter))?.value.n).toBe(20);
  });

  it('creates when absent, and two racing creators both apply', async () => {
    const add = (name: string) =>
      env.store.update('/t/upd/set', z.object({ names: z.array(z.string()) }), (c) => ({
        names: [...(c?.names ?? []), name],
      }));
    await Promise.all([add('a'), add('b')]);
    const got = await env.store.get('/t/upd/set', z.object({ names: z.array(z.string()) }));
    expect(got?.value.names.sort()).toEqual(['a', 'b']);
  });

  it('mutate returning undefined writes nothing and returns the current record', async () => {
    expect(await env.store.update('/t/upd/none', Counter, () => undefined)).toBeUndefined();
    expect(await env.store.get('/t/upd/none', Counter)).toBeUndefined();
    const rev = await env.store.put('/t/upd/keep', { n: 7 });
    const cur = await env.store.update('/t/upd/keep', Counter, () => undefined);
    expect(cur).toMatchObject({ value: { n: 7 }, modRevision: rev });
  });

  it('does not rewrite an unchanged value', async () => {
    const rev = await env.store.put('/t/upd/same', { n: 1 });
    const res = await env.store.update('/t/upd/same', Counter, (c) => ({ n: c?.n ?? 0 }));
    expect(res?.modRevision).toBe(rev);
  });

  it('gives up with a conflict VtlError when the record always changes under it', async () => {
    await env.store.put('/t/upd/hot', { n: 0 });
    let calls = 0;
    const err = await env.store
      .update('/t/upd/hot', Counter, async (c) => {
        calls++;
        await env.store.put('/t/upd/hot', { n: 1000 + calls });
        return { n: (c?.n ?? 0) + 1 };
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VtlError);
    expect((err as VtlError).code).toBe('conflict');
    expect(calls).toBeGreaterThan(1);
    expect((await env.store.get('/t/upd/hot', Counter))?.value.n).toBe(1000 + calls);
  });
});

describe('Store.transaction', () => {
  it('commits all operations when every comparison holds', async () => {
    const rev = await env.store.put('/t/txn/a', { name: 'a1' });
    await env.store.put('/t/txn/gone', { name: 'g' });
    const ok = await env.store
      .transaction()
      .ifAbsent('/t/txn/b')
      .ifModRevision('/t/txn/a', rev)
      .put('/t/txn/a', { name: 'a2' })
      .put('/t/txn/b', { name: 'b1' })
      .delete('/t/txn/gone')
      .commit();
    expect(ok).toBe(true);
    expect((await env.store.get('/t/txn/a', Named))?.value.name).toBe('a2');
    expect((await env.store.get('/t/txn/b', Named))?.value.name).toBe('b1');
    expect(await env.store.get('/t/txn/gone', Named)).toBeUndefined();
  });

  it('writes nothing when one comparison fails', async () => {
    await env.store.put('/t/txn2/exists', { name: 'e' });
    const rev = await env.store.put('/t/txn2/a', { name: 'a1' });
    const absentFails = await env.store
      .transaction()
      .ifAbsent('/t/txn2/exists')
      .ifModRevision('/t/txn2/a', rev)
      .put('/t/txn2/a', { name: 'changed' })
      .commit();
    expect(absentFails).toBe(false);
    await env.store.put('/t/txn2/a', { name: 'a2' });
    const staleFails = await env.store
      .transaction()
      .ifModRevision('/t/txn2/a', rev)
      .put('/t/txn2/new', { name: 'n' })
      .commit();
    expect(staleFails).toBe(false);
    expect((await env.store.get('/t/txn2/a', Named))?.value.name).toBe('a2');
    expect(await env.store.get('/t/txn2/new', Named)).toBeUndefined();
  });

  it('refuses a transaction larger than etcd accepts, writing nothing', async () => {
    const txn = env.store.transaction();
    for (let i = 0; i < 129; i++) txn.put(`/t/txn4/${i}`, { name: String(i) });
    await expect(txn.commit()).rejects.toThrow(/at most 128/);
    expect(await env.store.count('/t/txn4/')).toBe(0);
  });

  it('ifModRevision fails for a missing key', async () => {
    expect(
      await env.store.transaction().ifModRevision('/t/txn3/none', '5').put('/t/txn3/x', 1).commit(),
    ).toBe(false);
  });
});

describe('Store.nextId', () => {
  it('gives 50 parallel callers the distinct ids 1..50', async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, () => env.store.nextId('parallel')));
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await env.store.nextId('parallel')).toBe(51);
    expect(await env.store.nextId('other')).toBe(1);
  });
});
