import { describe, expect, it } from 'vitest';
import { deletionVerdict, liveStatus, type ApplianceView, type SyncOutcome } from './status.js';

// What a custom resource's status says after a sync, from the apply answer and the REST views.

const view: ApplianceView = {
  pools: [{ id: 2, name: 'fast', node: 'node1', state: 'active', detail: '' }],
  libraries: [{ id: 5, name: 'lib-a', serial: 'S123', state: 'pending_restart' }],
  remotes: [],
  initiators: [{ wwpn: 'naa.21000024ff8a0b01', applied: false, logged_in: false }],
};
const applied = (
  kind: string,
  name: string,
  action: 'create' | 'prune' | 'unchanged',
  ok = true,
  detail = '',
): SyncOutcome => ({
  valid: true,
  errors: [],
  actions: [{ kind: kind as never, name, action, fields: [] }],
  applied: action === 'unchanged' ? [] : [{ kind, name, action, ok, detail }],
});
const cond = (status: Record<string, unknown>, type: string) =>
  (status.conditions as { type: string; status: string; reason: string; message: string }[]).find(
    (c) => c.type === type,
  );

describe('status of a live custom resource', () => {
  it('is Ready with the observed fields and the generation when the record is in use', () => {
    const s = liveStatus(
      'TapePool',
      'fast',
      3,
      { path: '/p' },
      undefined,
      applied('TapePool', 'fast', 'create'),
      view,
    );
    expect(s).toMatchObject({ id: 2, state: 'active', observedGeneration: 3 });
    expect(cond(s, 'Synced')).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('is not Ready while a library waits for activation or an initiator is not applied', () => {
    const lib = liveStatus(
      'VirtualTapeLibrary',
      'lib-a',
      1,
      {},
      undefined,
      applied('VirtualTapeLibrary', 'lib-a', 'unchanged'),
      view,
    );
    expect(cond(lib, 'Ready')).toMatchObject({ status: 'False', reason: 'PendingActivation' });
    expect(lib).toMatchObject({ serial: 'S123', state: 'pending_restart' });
    const init = liveStatus(
      'TapeInitiator',
      'h',
      1,
      { wwpn: '21:00:00:24:ff:8a:0b:01' },
      undefined,
      applied('TapeInitiator', 'h', 'unchanged'),
      view,
    );
    expect(cond(init, 'Ready')).toMatchObject({ status: 'False', reason: 'NotApplied' });
    expect(init.registeredName).toBe('naa.21000024ff8a0b01');
  });

  it("says which other object's error blocked the whole set", () => {
    const outcome: SyncOutcome = {
      valid: false,
      errors: [
        {
          file: 'tapeinitiators/bad',
          document: 0,
          kind: 'TapeInitiator',
          name: 'bad',
          field: 'spec.wwpn',
          message: 'not a WWPN',
        },
      ],
      actions: [],
      applied: [],
    };
    const s = liveStatus('TapePool', 'fast', 1, {}, undefined, outcome, view);
    expect(cond(s, 'Synced')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(cond(s, 'Synced')?.message).toMatch(/TapeInitiator\/bad is invalid \(spec\.wwpn: not a WWPN\)/);
  });

  it('keeps lastTransitionTime while a condition does not change', () => {
    const first = liveStatus(
      'TapePool',
      'fast',
      1,
      {},
      undefined,
      applied('TapePool', 'fast', 'create'),
      view,
      '2026-01-01T00:00:00Z',
    );
    const again = liveStatus(
      'TapePool',
      'fast',
      1,
      {},
      first,
      applied('TapePool', 'fast', 'unchanged'),
      view,
      '2026-01-02T00:00:00Z',
    );
    expect(cond(again, 'Ready')).toMatchObject({ lastTransitionTime: '2026-01-01T00:00:00Z' });
  });
});

describe('deletion of a custom resource', () => {
  it('releases once the record is gone, or when this source never owned it', () => {
    expect(deletionVerdict('TapePool', 'gone', {}, applied('TapePool', 'gone', 'prune'), view)).toEqual({
      release: true,
    });
    expect(
      deletionVerdict('TapePool', 'fast', {}, { valid: true, errors: [], actions: [], applied: [] }, view),
    ).toEqual({ release: true });
  });

  it('keeps the finalizer with the appliance reason while the prune is refused', () => {
    const verdict = deletionVerdict(
      'TapePool',
      'fast',
      {},
      applied('TapePool', 'fast', 'prune', false, 'Pool "fast" homes library 5'),
      view,
    );
    expect(verdict).toEqual({
      release: false,
      reason: 'DeletionBlocked',
      message: 'The appliance refused to delete it: Pool "fast" homes library 5',
    });
  });
});
