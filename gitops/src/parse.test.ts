import { describe, expect, it } from 'vitest';
import { parseManifests } from './parse.js';
import { plan } from './plan.js';
import { emptyObserved } from './observed.js';
import { RECREATE_ANNOTATION } from './model/index.js';

const f = (content: string, file = 'hosts.yaml') => [{ file, content }];

describe('parseManifests', () => {
  it('reads several documents per file, skips empty ones, and keeps the document index', () => {
    const parsed = parseManifests(
      f(`---
apiVersion: vtl.appliance.io/v1alpha1
kind: TapeInitiator
metadata: { name: a }
spec: { wwpn: "iqn.2026-01.com.example:a" }
---
# only a comment
---
apiVersion: vtl.appliance.io/v1alpha1
kind: TapeInitiator
metadata: { name: b }
spec: { wwpn: "21:00:00:24:ff:00:00:0b", ports: [] }
`),
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.objects.map((o) => [o.object.metadata.name, o.document])).toEqual([
      ['a', 0],
      ['b', 2],
    ]);
  });

  it('gives every problem the line of its field, or of the nearest parent that is there', () => {
    const library = [
      'apiVersion: vtl.appliance.io/v1alpha1',
      'kind: VirtualTapeLibrary',
      'metadata:',
      '  name: lib-a',
      'spec:',
      '  product: 03584L32',
      '  driveProduct: ULT3580-TD8',
      '  numDrives: 40',
      '  labelPrefix: AB',
      '  poolRef: nowhere',
      '',
    ].join('\n');
    const broken = 'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata:\n  name: p\n  name: q\n';
    const missing =
      'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata:\n  name: p\nspec:\n  node: n1\n';
    const result = plan(
      [
        { file: 'lib.yaml', content: library },
        { file: 'broken.yaml', content: broken },
        { file: 'pool.yaml', content: missing },
      ],
      emptyObserved(),
      { source: 'test', prune: false },
    );
    const at = result.errors.map((e) => [e.file, e.line, e.field]);
    expect(at).toContainEqual(['lib.yaml', 8, 'spec.numDrives']);
    expect(at).toContainEqual(['lib.yaml', 9, 'spec.labelPrefix']);
    expect(result.errors.find((e) => e.file === 'broken.yaml')?.line).toBe(5);
    // spec.path is missing: the line of spec.
    expect(at).toContainEqual(['pool.yaml', 5, 'spec.path']);
  });

  it('names an unknown field, a wrong kind, a wrong apiVersion and broken YAML', () => {
    const parsed = parseManifests([
      ...f(
        'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata: { name: p }\nspec: { path: /a, colour: red }\n',
        'a.yaml',
      ),
      ...f('apiVersion: vtl.appliance.io/v1alpha1\nkind: Tape\nmetadata: { name: p }\nspec: {}\n', 'b.yaml'),
      ...f('apiVersion: v1\nkind: TapePool\nmetadata: { name: p }\nspec: {}\n', 'c.yaml'),
      ...f('kind: [unclosed\n', 'd.yaml'),
    ]);
    expect(parsed.errors.map((e) => [e.file, e.field])).toEqual([
      ['a.yaml', 'spec.colour'],
      ['b.yaml', 'kind'],
      ['c.yaml', 'apiVersion'],
      ['d.yaml', ''],
    ]);
    expect(parsed.errors[3]?.message).toMatch(/^YAML: /);
  });

  it('holds CHAP to iSCSI initiators and mutual CHAP to pairs (the CEL rules)', () => {
    const parsed = parseManifests(
      f(`apiVersion: vtl.appliance.io/v1alpha1
kind: TapeInitiator
metadata: { name: fc-host }
spec:
  wwpn: "21:00:00:24:ff:00:00:0b"
  chap: { username: u, secretRef: { name: s } }
`),
    );
    expect(parsed.errors[0]).toMatchObject({ field: 'spec.chap', message: expect.stringContaining('iSCSI') });
  });
});

describe('plan: initiators and the recreate annotation', () => {
  const init = (over = '') => `apiVersion: vtl.appliance.io/v1alpha1
kind: TapeInitiator
metadata:
  name: host-a
${over}spec: { wwpn: "iqn.2026-01.com.example:a", libraryRefs: [lib-x] }
`;
  it('refuses a library reference that is neither declared nor existing', () => {
    const p = plan(f(init()), emptyObserved(), { source: 's', prune: false });
    expect(p.errors[0]).toMatchObject({ field: 'spec.libraryRefs[0]', file: 'hosts.yaml' });
  });

  it('re-creates on an immutable change only under the annotation', () => {
    const o = emptyObserved();
    o.pools.push({
      id: 1,
      name: 'p',
      node: 'n1',
      path: '/a',
      created_at: '',
      active: true,
      managed_by: { source: 's', revision: 'r', name: 'p', spec_hash: 'h' },
    });
    const pool = (ann: string) =>
      `apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata:\n  name: p\n${ann}spec: { node: n1, path: /b }\n`;
    expect(plan(f(pool('')), o, { source: 's', prune: false }).actions[0]).toMatchObject({
      action: 'refused',
    });
    const allowed = plan(f(pool(`  annotations: { "${RECREATE_ANNOTATION}": "true" }\n`)), o, {
      source: 's',
      prune: false,
    });
    expect(allowed.valid).toBe(true);
    expect(allowed.actions[0]).toMatchObject({ action: 'update', recreate: true, fields: ['path'] });
  });
});
