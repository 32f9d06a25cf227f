import { describe, expect, it } from 'vitest';
import { plan } from './plan.js';
import { emptyObserved, type Observed } from './observed.js';
import { KINDS } from './model/index.js';
import { hasCheck } from './refinements.js';
import { specHash } from './hash.js';
import { objectStatuses } from './conditions.js';

const POOL = `apiVersion: vtl.appliance.io/v1alpha1
kind: TapePool
metadata: { name: pool-a }
spec: { node: node1, path: /srv/pool-a }
`;
const LIB = `apiVersion: vtl.appliance.io/v1alpha1
kind: VirtualTapeLibrary
metadata: { name: lib-a }
spec:
  product: 3573-TL
  driveProduct: ULT3580-TD8
  numDrives: 2
  labelPrefix: ABC
  poolRef: pool-a
  activation: auto
`;
const files = (...contents: string[]) => contents.map((content, i) => ({ file: `f${i}.yaml`, content }));
const opts = { source: 'git1', prune: true };

function observedWithPool(managed?: { source: string; spec_hash: string }): Observed {
  const o = emptyObserved();
  o.pools.push({
    id: 1,
    name: 'pool-a',
    node: 'node1',
    path: '/srv/pool-a',
    created_at: '',
    active: true,
    ...(managed ? { managed_by: { ...managed, revision: 'r1', name: 'pool-a' } } : {}),
  });
  return o;
}

describe('plan', () => {
  it('creates what is declared and missing, pools before the libraries they home', () => {
    const p = plan(files(LIB, POOL), emptyObserved(), opts);
    expect(p.valid).toBe(true);
    expect(p.actions.map((a) => [a.kind, a.action])).toEqual([
      ['TapePool', 'create'],
      ['VirtualTapeLibrary', 'create'],
    ]);
    expect(p.actions[1]?.activate).toBe(true);
    const manual = plan(
      files(LIB.replace('activation: auto', 'activation: manual'), POOL),
      emptyObserved(),
      opts,
    );
    expect(manual.actions[1]).toMatchObject({ pendingActivation: true });
    expect(manual.actions[1]?.activate).toBeUndefined();
  });

  it('names the file, document and field of a schema error, and the set is invalid', () => {
    const bad = `---\n${POOL}---\n${LIB.replace('numDrives: 2', 'numDrives: "two"')}`;
    const p = plan(files(bad), emptyObserved(), opts);
    expect(p.valid).toBe(false);
    expect(p.errors).toEqual([
      expect.objectContaining({
        file: 'f0.yaml',
        document: 1,
        kind: 'VirtualTapeLibrary',
        name: 'lib-a',
        field: 'spec.numDrives',
      }),
    ]);
  });

  it('refuses a dangling reference', () => {
    const p = plan(files(LIB), emptyObserved(), opts);
    expect(p.valid).toBe(false);
    expect(p.errors[0]).toMatchObject({
      field: 'spec.poolRef',
      message: expect.stringContaining('no TapePool "pool-a"'),
    });
  });

  it('checks the CEL rules in TypeScript too', () => {
    for (const k of Object.values(KINDS)) for (const r of k.rules) expect(hasCheck(r.rule)).toBe(true);
    const p = plan(files(POOL, LIB.replace('numDrives: 2', 'numDrives: 6')), emptyObserved(), opts);
    expect(p.errors[0]).toMatchObject({
      field: 'spec.numDrives',
      message: expect.stringContaining('1 to 4'),
    });
  });

  it('refuses an immutable change, naming the field and what to do', () => {
    const o = observedWithPool({ source: 'git1', spec_hash: 'x' });
    const p = plan(files(POOL.replace('/srv/pool-a', '/srv/elsewhere')), o, opts);
    expect(p.valid).toBe(false);
    expect(p.actions[0]).toMatchObject({ action: 'refused', fields: ['path'] });
    expect(p.errors[0]?.message).toContain('recreate-on-immutable-change');
  });

  it('adopts an object made through the API, and never prunes one', () => {
    const adopted = plan(files(POOL), observedWithPool(), opts);
    expect(adopted.actions[0]).toMatchObject({ action: 'unchanged', adopt: true });
    const none = plan([], observedWithPool(), opts);
    expect(none.actions).toEqual([]);
  });

  it('prunes what this source owns and no longer declares, and only that', () => {
    const mine = plan([], observedWithPool({ source: 'git1', spec_hash: 'x' }), opts);
    expect(mine.actions).toEqual([
      expect.objectContaining({ kind: 'TapePool', name: 'pool-a', action: 'prune' }),
    ]);
    const theirs = plan([], observedWithPool({ source: 'other', spec_hash: 'x' }), opts);
    expect(theirs.actions).toEqual([]);
    const off = plan([], observedWithPool({ source: 'git1', spec_hash: 'x' }), { ...opts, prune: false });
    expect(off.actions).toEqual([]);
  });

  it('calls an owned record that differs from an unchanged declaration drift', () => {
    const remote = `apiVersion: vtl.appliance.io/v1alpha1
kind: TapeRemote
metadata: { name: offsite }
spec: { endpoint: "http://127.0.0.1:7480", bucket: b1, accessKey: AK, secretRef: { name: s3 } }
`;
    const o = emptyObserved();
    o.secrets.s3 = { secretKey: 'SK' };
    const first = plan(files(remote), o, opts);
    expect(first.valid).toBe(true);
    const hash = first.steps[0]?.specHash as string;
    o.remotes.push({
      id: 3,
      name: 'offsite',
      endpoint: '127.0.0.1:7480',
      region: '',
      bucket: 'changed',
      prefix: '',
      access_key: 'AK',
      use_ssl: false,
      path_style: false,
      created_at: '',
      last_test_at: '',
      last_test_ok: false,
      last_test_detail: '',
      managed_by: { source: 'git1', revision: 'r1', name: 'offsite', spec_hash: hash },
    });
    o.remoteSecrets[3] = 'SK';
    const p = plan(files(remote), o, opts);
    expect(p.actions[0]).toMatchObject({ action: 'update', fields: ['bucket'] });
    expect(p.steps[0]?.drift).toBe(true);
    // A changed secret shows as secretRef, never its value.
    o.secrets.s3 = { secretKey: 'NEW' };
    const rotated = plan(files(remote.replace('b1', 'changed')), o, opts);
    expect(rotated.actions[0]).toMatchObject({ action: 'update', fields: ['secretRef'] });
    expect(JSON.stringify(rotated.actions)).not.toContain('NEW');
  });

  it('refuses an object another source owns', () => {
    const p = plan(files(POOL), observedWithPool({ source: 'other', spec_hash: specHash({}) }), opts);
    expect(p.errors[0]?.message).toContain('owned by source "other"');
  });
});

describe('objectStatuses', () => {
  it('says a manual library waits for activation, and an immutable change which field and what to do', () => {
    const manual = plan(
      files(LIB.replace('activation: auto', 'activation: manual'), POOL),
      emptyObserved(),
      opts,
    );
    const [, lib] = objectStatuses(manual.actions, manual.errors, [
      { kind: 'TapePool', name: 'pool-a', ok: true, detail: '' },
      { kind: 'VirtualTapeLibrary', name: 'lib-a', ok: true, detail: '' },
    ]);
    expect(lib?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'PendingActivation' }),
    );
    const o = observedWithPool({ source: 'git1', spec_hash: 'x' });
    const refused = plan(files(POOL.replace('/srv/pool-a', '/srv/b')), o, opts);
    const [pool] = objectStatuses(refused.actions, refused.errors, undefined);
    expect(pool?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Synced',
        status: 'False',
        reason: 'ImmutableFieldChanged',
        message: expect.stringContaining('spec.path'),
      }),
    );
  });
});
