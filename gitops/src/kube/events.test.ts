import { describe, expect, it } from 'vitest';
import { syncEvents } from './events.js';

describe('syncEvents: what one sync says about each resource', () => {
  it("an immutable change (an invalid set) is ImmutableFieldChanged; the others' errors are Invalid", () => {
    const events = syncEvents({
      valid: false,
      errors: [
        {
          file: 'a',
          document: 0,
          kind: 'VirtualTapeLibrary',
          name: 'lib',
          field: 'spec.numDrives',
          message: 'm',
        },
        {
          file: 'b',
          document: 0,
          kind: 'TapePool',
          name: 'p',
          field: 'spec.path',
          message: 'must be absolute',
        },
      ],
      actions: [
        {
          kind: 'VirtualTapeLibrary',
          name: 'lib',
          action: 'refused',
          fields: ['numDrives'],
          reason: 'spec.numDrives cannot change',
        },
      ],
      applied: [],
    });
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'VirtualTapeLibrary',
        type: 'Warning',
        reason: 'ImmutableFieldChanged',
        message: 'spec.numDrives cannot change',
      }),
      expect.objectContaining({
        kind: 'TapePool',
        type: 'Warning',
        reason: 'Invalid',
        message: expect.stringContaining('spec.path: must be absolute'),
      }),
    ]);
  });

  it('drift, prune and a refused prune; nothing for unchanged objects or an unreachable appliance', () => {
    const outcome = {
      valid: true,
      errors: [],
      actions: [
        {
          kind: 'TapeInitiator' as const,
          name: 'h',
          action: 'update' as const,
          fields: ['alias'],
          drift: true,
          reason: 'changed outside',
        },
        { kind: 'TapePool' as const, name: 'p', action: 'prune' as const, fields: [] },
        { kind: 'VirtualTapeLibrary' as const, name: 'l', action: 'prune' as const, fields: [] },
        { kind: 'TapeRemote' as const, name: 'r', action: 'unchanged' as const, fields: [] },
      ],
      applied: [
        { kind: 'TapeInitiator', name: 'h', action: 'update' as const, ok: true, detail: 'Updated alias.' },
        { kind: 'TapePool', name: 'p', action: 'prune' as const, ok: true, detail: 'Deleted pool 2.' },
        {
          kind: 'VirtualTapeLibrary',
          name: 'l',
          action: 'prune' as const,
          ok: false,
          detail: 'refused while 1 job(s)',
        },
      ],
    };
    expect(syncEvents(outcome).map((e) => [e.kind, e.type, e.reason])).toEqual([
      ['TapeInitiator', 'Normal', 'DriftCorrected'],
      ['TapePool', 'Normal', 'Pruned'],
      ['VirtualTapeLibrary', 'Warning', 'DeletionBlocked'],
    ]);
    expect(syncEvents({ ...outcome, failure: 'unreachable' })).toEqual([]);
  });
});
