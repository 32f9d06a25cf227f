import { describe, expect, it } from 'vitest';
import { LibrarySpec, type LibraryStatus, type NodeLibraryStatus, type NodeRecord } from '@vtl/api';
import {
  DATAPLANE_RESTART_TIMEOUT_MS,
  LIBRARY_UP_TIMEOUT_MS,
  deriveLibraryStatus,
  type LibraryInputs,
} from './library-status.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const lib = LibrarySpec.parse({
  id: 1,
  name: 'l',
  vendor: 'IBM',
  product: '3573-TL',
  variant: '',
  serial: 'S1',
  drive_model: 'ULT3580-TD8',
  drive_serials: [],
  num_drives: 1,
  num_slots: 5,
  num_ie: 1,
  label_prefix: 'ABC',
  media_dir: '/p/l',
  home_pool: 1,
  created_at: '',
});
const node = (
  generation: number,
  state: NodeRecord['dataplane']['state'] = 'running',
  startedAt = T0,
): NodeRecord => ({
  node: 'n1',
  updated_at: '',
  dataplane: {
    state,
    generation,
    pid: 1,
    detail: state === 'failed' ? 'port in use' : '',
    started_at: new Date(startedAt).toISOString(),
    iscsi_portal: '',
    iscsi_sessions: 0,
  },
});
const served: NodeLibraryStatus = {
  node: 'n1',
  id: 1,
  library: { id: 1, serial: 'S1', changer_sg: '', drives: [], slots: [] },
  cartridges: [],
};
const inputs = (over: Partial<LibraryInputs>): LibraryInputs => ({
  lib,
  specRevision: 7,
  node: 'n1',
  dataplane: { generation: 2, libraries: [1], requested_at: new Date(T0).toISOString() },
  nodes: new Map(),
  served: [],
  previous: undefined,
  now: T0,
  ...over,
});
const cond = (s: LibraryStatus, type: string) => s.conditions?.find((c) => c.type === type);

/** The lifecycle rules, as pure functions of the inputs (the reconciler test runs them on etcd). */
describe('deriving a library status', () => {
  it('is pending_restart outside the desired data plane, with the spec revision it saw', () => {
    const { status } = deriveLibraryStatus(inputs({ dataplane: undefined }));
    expect(status).toMatchObject({
      state: 'pending_restart',
      phase: 'pending_restart',
      observedGeneration: 7,
    });
    expect(cond(status, 'Ready')).toMatchObject({ status: 'False', reason: 'PendingRestart' });
  });

  it('is activating until the node serves it in the desired generation, then asks to look again at its deadline', () => {
    const old = deriveLibraryStatus(inputs({ nodes: new Map([['n1', node(1)]]), served: [served] }));
    expect(old.status).toMatchObject({ phase: 'activating', state: 'pending_restart' });
    // Served, but by the emulator of the old generation: Serving is true, Ready is not.
    expect(cond(old.status, 'Serving')?.status).toBe('True');
    expect(cond(old.status, 'Ready')?.reason).toBe('Activating');
    expect(old.recheckAfterMs).toBeGreaterThan(DATAPLANE_RESTART_TIMEOUT_MS);

    const up = deriveLibraryStatus(inputs({ nodes: new Map([['n1', node(2)]]), served: [served] }));
    expect(up.status).toMatchObject({ phase: 'active', state: 'active', served_generation: 2 });
    expect(up.status.activated_at).toBe(new Date(T0).toISOString());
    expect(up.recheckAfterMs).toBeUndefined();
  });

  it('fails the activation once the node has run the new generation for 30 s without serving it', () => {
    const running = new Map([['n1', node(2, 'running', T0)]]);
    const waiting = deriveLibraryStatus(inputs({ nodes: running, now: T0 + LIBRARY_UP_TIMEOUT_MS - 1 }));
    expect(waiting.status.phase).toBe('activating');
    const late = deriveLibraryStatus(inputs({ nodes: running, now: T0 + LIBRARY_UP_TIMEOUT_MS }));
    expect(late.status).toMatchObject({ phase: 'failed', state: 'pending_restart' });
    expect(cond(late.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'ActivationFailed' });
  });

  it('fails at once when the node reports its emulator failed in the desired generation', () => {
    const { status } = deriveLibraryStatus(inputs({ nodes: new Map([['n1', node(2, 'failed')]]) }));
    expect(status).toMatchObject({ phase: 'failed', state: 'pending_restart' });
    expect(cond(status, 'Ready')?.message).toMatch(/port in use/);
  });

  it('keeps an active library active while a re-apply restarts the emulator', () => {
    const before = deriveLibraryStatus(
      inputs({
        dataplane: { generation: 2, libraries: [1], requested_at: '' },
        nodes: new Map([['n1', node(2)]]),
        served: [served],
      }),
    ).status;
    const { status } = deriveLibraryStatus(
      inputs({
        dataplane: { generation: 3, libraries: [1], requested_at: new Date(T0).toISOString() },
        nodes: new Map([['n1', node(2)]]),
        served: [served],
        previous: before,
        now: T0 + 1000,
      }),
    );
    expect(status).toMatchObject({ phase: 'activating', state: 'active', activated_at: before.activated_at });
  });

  it('is degraded, still active, when the node that served it stops reporting; its transition time is kept while nothing changes', () => {
    const active = deriveLibraryStatus(
      inputs({ nodes: new Map([['n1', node(2)]]), served: [served] }),
    ).status;
    const lost = deriveLibraryStatus(inputs({ previous: active, now: T0 + 5000 })).status;
    expect(lost).toMatchObject({ phase: 'degraded', state: 'active' });
    expect(cond(lost, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'NodeNotReporting',
      lastTransitionTime: new Date(T0 + 5000).toISOString(),
    });
    const still = deriveLibraryStatus(inputs({ previous: lost, now: T0 + 9000 })).status;
    expect(still).toEqual(lost);
    const back = deriveLibraryStatus(
      inputs({ previous: lost, nodes: new Map([['n1', node(2)]]), served: [served], now: T0 + 12000 }),
    ).status;
    expect(back).toMatchObject({ phase: 'active', activated_at: active.activated_at });
    expect(cond(back, 'Ready')?.lastTransitionTime).toBe(new Date(T0 + 12000).toISOString());
  });

  it('is not ready, naming the node and since when, when the node is quiet though its lease holds', () => {
    const active = deriveLibraryStatus(
      inputs({ nodes: new Map([['n1', node(2)]]), served: [served] }),
    ).status;
    const lastSeenAt = new Date(T0 + 1000).toISOString();
    const stale = new Map([['n1', { lastSeenAt, staleAfterMs: 8000 }]]);
    // The reconciler leaves a quiet node out of `nodes`; its per-library record is still there.
    const quiet = deriveLibraryStatus(
      inputs({ previous: active, served: [served], stale, now: T0 + 9500 }),
    ).status;
    expect(quiet).toMatchObject({ phase: 'degraded', state: 'active' });
    const ready = cond(quiet, 'Ready')!;
    expect(ready).toMatchObject({ status: 'False', reason: 'NodeNotReporting' });
    expect(ready.message).toContain(
      `Node n1 has not refreshed its status since ${lastSeenAt} (more than 8 s)`,
    );
    expect(ready.message).toMatch(/lease is still held/);
    expect(cond(quiet, 'Serving')).toMatchObject({ status: 'False' });
    expect(cond(quiet, 'Serving')!.message).toContain(lastSeenAt);
    // The message names when it was last heard, not how long ago: a later pass writes nothing new.
    const later = deriveLibraryStatus(
      inputs({ previous: quiet, served: [served], stale, now: T0 + 20000 }),
    ).status;
    expect(later).toEqual(quiet);
  });
});
