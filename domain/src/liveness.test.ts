import { describe, expect, it } from 'vitest';
import { VtlError, type LibrarySpec, type LibraryStatus, type NodeStatus, type PoolSpec } from '@vtl/api';
import { libraryLiveness, refuseWhileLivenessUnknown, requireLive } from './liveness.js';
import { liveLibraryIds, refuseWithLoadedDrives, type Snapshot } from './snapshot.js';

const lib = { id: 1, home_pool: 1, deleting: false } as LibrarySpec;
const pool = { id: 1, node: 'n1' } as PoolSpec;
const served = (loaded?: string) =>
  ({
    node: 'n1',
    libraries: [{ id: 1, drives: [{ index: 0, loaded }] }],
    cartridges: [],
  }) as unknown as NodeStatus;

function snapshot(over: { state?: LibraryStatus['state']; nodes?: NodeStatus[] }): Snapshot {
  return {
    libraries: [lib],
    libraryStatus: new Map(over.state ? [[1, { id: 1, state: over.state } as LibraryStatus]] : []),
    pools: [pool],
    poolStatus: new Map(),
    nodes: over.nodes ?? [],
    cartridges: [],
    jobs: [],
    dataplane: undefined,
  };
}

describe('library liveness', () => {
  it('is live when a node reports the library', () => {
    const s = snapshot({ state: 'active', nodes: [served()] });
    expect(libraryLiveness(s, lib).state).toBe('live');
    expect(liveLibraryIds(s)).toEqual([1]);
  });

  it('is unknown, a 503, for an applied library whose node has not reported', () => {
    const s = snapshot({ state: 'active' });
    expect(libraryLiveness(s, lib)).toEqual({ state: 'unknown', node: 'n1' });
    const err = (() => {
      try {
        requireLive(s, lib, 'not live; apply it first');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(VtlError);
    expect((err as VtlError).code).toBe('unavailable');
    expect(() => refuseWhileLivenessUnknown(s)).toThrow(/unknown/);
  });

  it('is not served, a 503 saying what happens, for an applied library its reporting node does not serve', () => {
    const restarting = {
      ...served(),
      libraries: [],
      dataplane: { state: 'starting', detail: 'restarting after a crash' },
    } as unknown as NodeStatus;
    const s = snapshot({ state: 'active', nodes: [restarting] });
    expect(libraryLiveness(s, lib)).toEqual({ state: 'not_served', node: 'n1' });
    const err = (() => {
      try {
        requireLive(s, lib, 'not live; apply it first');
      } catch (e) {
        return e as VtlError;
      }
    })();
    expect(err?.code).toBe('unavailable');
    expect(err?.message).toMatch(
      /emulator on node n1 is starting \(restarting after a crash\).*no apply is needed/,
    );
    expect(err?.details).toMatchObject({ library: 1, node: 'n1', dataplane: 'starting', retry_after_sec: 5 });
    expect(() => refuseWhileLivenessUnknown(s)).toThrow(/not serving it at the moment/);
  });

  it('is not live, a 400, only for a library never applied, whatever the node', () => {
    for (const s of [snapshot({ nodes: [{ ...served(), libraries: [] }] }), snapshot({})]) {
      expect(libraryLiveness(s, lib).state).toBe('not_live');
      expect(() => requireLive(s, lib, 'not live; apply it first')).toThrow(/apply it first/);
      expect(() => refuseWhileLivenessUnknown(s)).not.toThrow();
    }
  });

  it('refuses while a drive holds a cartridge, naming it', () => {
    expect(() => refuseWithLoadedDrives(snapshot({ nodes: [served('ABC001L8')] }), 'Apply')).toThrow(
      /ABC001L8 in drive 0 of library 1/,
    );
    expect(() => refuseWithLoadedDrives(snapshot({ nodes: [served()] }), 'Apply')).not.toThrow();
  });
});
