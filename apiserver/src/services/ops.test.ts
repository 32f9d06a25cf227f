import { describe, expect, it } from 'vitest';
import { Op, VtlError, keys } from '@vtl/api';
import { submitOp } from '@vtl/domain';
import { awaitOpResult } from './ops.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/** The route helpers' wait for an op on a real etcd: its result, its error, or 504 naming it. */
describe('awaitOpResult', () => {
  const t = useTestStore();

  /** The executor: finishes the op after a while, as the controller writes it. */
  const finish = (id: number, over: Partial<Op>, afterMs: number) =>
    setTimeout(async () => {
      const rec = (await t.store.get(keys.ops.one(id), Op))!.value;
      await t.store.put(keys.ops.one(id), { ...rec, ...over });
    }, afterMs);

  it('answers the result the executor records', async () => {
    const id = await submitOp(t.store, { kind: 'apply', executor: 'controller', params: {} });
    finish(id, { state: 'succeeded', result: { applied: [1] } }, 300);
    await expect(awaitOpResult(t.store, id, 10_000)).resolves.toEqual({ applied: [1] });
  });

  it("throws the executor's error with the op's steps", async () => {
    const id = await submitOp(t.store, { kind: 'apply', executor: 'controller', params: {} });
    finish(
      id,
      { state: 'failed', steps: ['one'], error: { code: 'bad_request', message: 'no', details: {} } },
      100,
    );
    const err = await awaitOpResult(t.store, id, 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VtlError);
    expect(err).toMatchObject({ code: 'bad_request', message: 'no', details: { steps: ['one'] } });
  });

  it('answers 504 timeout naming the op at the deadline; the op goes on', async () => {
    const id = await submitOp(t.store, { kind: 'apply', executor: 'controller', params: {} });
    const started = Date.now();
    const err = await awaitOpResult(t.store, id, 700).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(690);
    expect(err).toMatchObject({ code: 'timeout', status: 504, details: { op: id } });
    expect((err as Error).message).toMatch(new RegExp(`Operation ${id} \\(apply\\) is still pending`));
  });
});
