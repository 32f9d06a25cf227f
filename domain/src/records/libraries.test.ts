import { beforeEach, describe, expect, it } from 'vitest';
import { LibrarySpec, Op, badRequest, isoNow, keys, type VtlError } from '@vtl/api';
import { z } from 'zod';
import { ExclusiveOpClaim, submitExclusiveOp } from './exclusive-op.js';
import { declareLibrary, declareLibraryWithApply, removeLibrary } from './libraries.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const plan = (serial: string) => (id: number) =>
  LibrarySpec.parse({
    id,
    name: serial,
    vendor: 'IBM',
    product: '3573-TL',
    variant: '',
    serial,
    drive_model: 'ULT3580-TD8',
    drive_serials: ['D1'],
    num_drives: 1,
    num_slots: 10,
    num_ie: 2,
    label_prefix: 'ABC',
    media_dir: `/p/${serial}`,
    home_pool: 7,
    created_at: isoNow(),
  });

describe('library records (declare, recover, remove)', () => {
  const t = useTestStore();
  beforeEach(async () => {
    // Every exclusive op finished; no library, no claim left from the case before.
    for (const { key, value } of (await t.store.list(keys.ops.prefix, Op)).items)
      await t.store.put(key, { ...value, state: 'succeeded' });
    for (const { value } of (await t.store.list(keys.libraries.prefix, LibrarySpec)).items)
      await removeLibrary(t.store, value);
  });

  const libraries = async () =>
    (await t.store.list(keys.libraries.prefix, LibrarySpec)).items.map((i) => i.value);
  const recover = (serial: string) =>
    declareLibraryWithApply(
      t.store,
      plan(serial),
      { kind: 'apply', executor: 'controller', params: {} },
      'Recover',
      async () => () => undefined,
    );
  const exclusive = (kind: 'apply' | 'delete_library') =>
    submitExclusiveOp(t.store, { kind, executor: 'controller', params: {} }, 'Apply');

  it.each(['apply', 'delete_library'] as const)(
    'of a recovery and a racing %s, exactly one is recorded; the other gets 409',
    async (kind) => {
      for (let round = 0; round < 5; round++) {
        const before = await libraries();
        const [a, b] = await Promise.allSettled([recover(`REC${kind.length}${round}`), exclusive(kind)]);
        const won = [a, b].filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        const lost = [a, b].find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect((lost.reason as VtlError).code).toBe('conflict');
        // The winner holds the exclusive claim; a library exists only when the recovery won.
        const claim = (await t.store.get(keys.exclusiveOp, ExclusiveOpClaim))?.value.op;
        if (a.status === 'fulfilled') {
          expect(claim).toBe(a.value.applyId);
          expect(await libraries()).toHaveLength(before.length + 1);
        } else {
          expect(claim).toBe((b as PromiseFulfilledResult<number>).value);
          expect(await libraries()).toHaveLength(before.length);
        }
        // Let the winner finish so the next round starts free.
        for (const { key, value } of (await t.store.list(keys.ops.prefix, Op)).items)
          await t.store.put(key, { ...value, state: 'succeeded' });
        for (const l of await libraries()) await removeLibrary(t.store, l);
      }
    },
  );

  it('a recovery while an apply runs is refused and records nothing', async () => {
    const apply = await exclusive('apply');
    await expect(recover('RECBUSY1')).rejects.toMatchObject({ code: 'conflict', details: { op: apply } });
    expect(await libraries()).toEqual([]);
    expect(await t.store.get(keys.librarySerial('RECBUSY1'), z.unknown())).toBeUndefined();
  });

  it('refused declares leave the id counter: the next accepted one takes the next id', async () => {
    const first = await declareLibrary(t.store, plan('IDS00001'));
    await removeLibrary(t.store, first);
    for (let i = 0; i < 5; i++)
      await expect(
        declareLibrary(t.store, () => {
          throw badRequest('refused');
        }),
      ).rejects.toMatchObject({ code: 'bad_request' });
    // A second library on a pool that is homed already is refused too, after planning its id.
    const second = await declareLibrary(t.store, plan('IDS00002'));
    await expect(declareLibrary(t.store, plan('IDS00003'))).rejects.toMatchObject({ code: 'bad_request' });
    expect(second.id).toBe(first.id + 1);
    await removeLibrary(t.store, second);
    expect((await declareLibrary(t.store, plan('IDS00004'))).id).toBe(first.id + 2);
  });
});
