import fs from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { normalizeWwpn, WWPN_INPUT } from '@vtl/api';
import { CRD_DIRS, crdFiles, isGeneratedName, REPO_ROOT } from './crd-files.js';
import { buildCrd, crdName } from './crd.js';
import type { SchemaNode } from './json-schema.js';
import { GROUP, RESOURCES, VERSION, type CrdResource } from './resources.js';
import { structuralProblems } from './structural-problems.js';

const REGENERATE = 'stale: run `npx tsc -b crds && node crds/dist/generate.js`';

type Crd = ReturnType<typeof buildCrd>;
const readCrd = (dir: string, resource: CrdResource): Crd =>
  parse(fs.readFileSync(path.join(REPO_ROOT, dir, `${crdName(resource)}.yaml`), 'utf8')) as Crd;
const rootSchema = (crd: Crd) => crd.spec.versions[0]?.schema.openAPIV3Schema as SchemaNode;
const specOf = (crd: Crd) => (rootSchema(crd).properties as Record<string, SchemaNode>).spec as SchemaNode;

/** Keys of a zod object a client must send: not optional and without a default. */
function zodRequired(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => (field as z.ZodType)._zod.optin === undefined)
    .map(([key]) => key);
}

/** Pairs of (zod object, schema node) for the object and every nested object field. */
function objectPairs(
  schema: z.ZodObject,
  node: SchemaNode,
  at = 'spec',
): [string, z.ZodObject, SchemaNode][] {
  const pairs: [string, z.ZodObject, SchemaNode][] = [[at, schema, node]];
  for (const [key, field] of Object.entries(schema.shape)) {
    const child = (node.properties as Record<string, SchemaNode>)[key];
    if (field instanceof z.ZodObject && child) pairs.push(...objectPairs(field, child, `${at}.${key}`));
  }
  return pairs;
}

describe('generated CRD files', () => {
  const files = crdFiles();

  it('are formatted as prettier formats them, so `prettier --check` passes on crds/generated', async () => {
    for (const file of files) {
      const filepath = path.join(REPO_ROOT, 'crds/generated', file.name);
      const options = { ...(await resolveConfig(filepath)), filepath };
      expect(await format(file.text, options), file.name).toBe(file.text);
    }
  });

  for (const dir of CRD_DIRS) {
    it(`${dir} holds exactly the CRDs the schemas generate, byte for byte`, () => {
      const present = fs.readdirSync(path.join(REPO_ROOT, dir)).filter(isGeneratedName).sort();
      expect(present, REGENERATE).toEqual(files.map((f) => f.name).sort());
      for (const file of files) {
        expect(
          fs.readFileSync(path.join(REPO_ROOT, dir, file.name), 'utf8'),
          `${dir}/${file.name} ${REGENERATE}`,
        ).toBe(file.text);
      }
    });
  }
});

describe.each(RESOURCES)('$kind CRD', (resource) => {
  const crd = readCrd('crds/generated', resource);

  it('is a namespaced v1alpha1 resource of the vtl group with a status subresource', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe(`${resource.plural}.${GROUP}`);
    expect(crd.spec.group).toBe(GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({ kind: resource.kind, listKind: `${resource.kind}List` });
    expect(crd.spec.versions).toHaveLength(1);
    expect(crd.spec.versions[0]).toMatchObject({
      name: VERSION,
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('has a structural schema with a required spec and a typed status with conditions', () => {
    const root = rootSchema(crd);
    expect(structuralProblems(root)).toEqual([]);
    expect(root.required).toEqual(['spec']);
    const status = (root.properties as Record<string, SchemaNode>).status as SchemaNode;
    expect(status['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
    const props = status.properties as Record<string, SchemaNode>;
    expect(props.observedGeneration).toMatchObject({ type: 'integer' });
    expect(props.conditions).toMatchObject({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
    const condition = props.conditions!.items as SchemaNode;
    expect(condition.required).toEqual(
      expect.arrayContaining(['type', 'status', 'reason', 'message', 'lastTransitionTime']),
    );
    expect(JSON.stringify(root)).not.toMatch(/"\$ref"|"const"|"anyOf"|"oneOf"|"allOf"/);
  });

  it('requires exactly the fields zod requires, at every object level', () => {
    for (const [at, schema, node] of objectPairs(resource.spec, specOf(crd))) {
      expect(new Set((node.required as string[] | undefined) ?? []), at).toEqual(
        new Set(zodRequired(schema)),
      );
      expect(Object.keys(node.properties as object), at).toEqual(Object.keys(schema.shape));
    }
  });

  it('has printer columns Ready first and Age last, whose .spec and .status paths exist with the column type', () => {
    const columns = crd.spec.versions[0]?.additionalPrinterColumns ?? [];
    expect(columns.at(-1)).toMatchObject({ name: 'Age', jsonPath: '.metadata.creationTimestamp' });
    expect(columns[0]).toMatchObject({
      name: 'Ready',
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    });
    const status = (rootSchema(crd).properties as Record<string, SchemaNode>).status as SchemaNode;
    for (const column of columns.filter((c) => /^\.status\.\w+$/.test(c.jsonPath))) {
      const node = (status.properties as Record<string, SchemaNode>)[column.jsonPath.split('.')[2]!];
      expect(node?.type, column.jsonPath).toBe(column.type);
    }
    for (const column of columns.filter((c) => c.jsonPath.startsWith('.spec.'))) {
      let node: SchemaNode | undefined = specOf(crd);
      for (const key of column.jsonPath.split('.').slice(2)) {
        node = (node?.properties as Record<string, SchemaNode> | undefined)?.[key];
      }
      expect(node?.type, column.jsonPath).toBe(column.type);
    }
  });
});

describe('spec schemas from the gitops model', () => {
  const spec = (kind: string) => specOf(buildCrd(RESOURCES.find((r) => r.kind === kind) as CrdResource));
  const props = (node: SchemaNode) => node.properties as Record<string, SchemaNode>;
  const rules = (node: SchemaNode | undefined) =>
    (node?.['x-kubernetes-validations'] as { rule: string; message: string; fieldPath?: string }[]) ?? [];

  it('are camelCase with references by name, never server-assigned ids', () => {
    const library = spec('VirtualTapeLibrary');
    expect(library.required).toEqual(['product', 'driveProduct', 'numDrives', 'labelPrefix', 'poolRef']);
    expect(props(library).numSlots).toMatchObject({ type: 'integer', default: 100, maximum: 400 });
    expect(props(library).activation).toMatchObject({ enum: ['manual', 'auto'], default: 'manual' });
    expect(JSON.stringify(RESOURCES.map((r) => specOf(buildCrd(r))))).not.toMatch(
      /_id"|"pool_id|"libraries"/,
    );
    expect(props(spec('TapeInitiator')).libraryRefs).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
  });

  it('TapeRemote takes the secret key by reference, never inline', () => {
    const remote = props(spec('TapeRemote'));
    expect(remote.secretKey).toBeUndefined();
    expect(remote.secretRef).toMatchObject({ type: 'object', required: ['name'] });
    expect(remote.useSsl).toMatchObject({ type: 'boolean', default: true });
    expect(remote.endpoint).toMatchObject({ default: 's3.amazonaws.com' });
  });

  it('marks immutable fields with self == oldSelf, on the parent when the field may be absent', () => {
    const library = spec('VirtualTapeLibrary');
    for (const field of [
      'product',
      'driveProduct',
      'numDrives',
      'numSlots',
      'numMap',
      'labelPrefix',
      'poolRef',
    ])
      expect(rules(props(library)[field]), field).toContainEqual(
        expect.objectContaining({
          rule: 'self == oldSelf',
          message: expect.stringContaining(`spec.${field} is immutable`),
        }),
      );
    expect(rules(props(library).activation)).toEqual([]);
    const pool = spec('TapePool');
    expect(rules(props(pool).path)).toContainEqual(expect.objectContaining({ rule: 'self == oldSelf' }));
    // node is optional without a default: a rule on the field would not run when it is added.
    expect(rules(pool)).toContainEqual(
      expect.objectContaining({
        rule: expect.stringContaining('has(self.node) == has(oldSelf.node)'),
        fieldPath: '.node',
      }),
    );
  });

  it('bounds every string a CEL rule reads, so the rule cost estimate stays within budget', () => {
    for (const resource of RESOURCES) {
      const node = spec(resource.kind);
      for (const { rule } of rules(node))
        for (const [, field] of rule.matchAll(/self\.(\w+)\.(?:lowerAscii|startsWith|matches|size)/g))
          expect(props(node)[field!]?.maxLength, `${resource.kind} ${field}`).toBeTypeOf('number');
    }
  });

  it("carries the model's refinements as CEL rules with the field they are about", () => {
    const library = spec('VirtualTapeLibrary');
    expect(rules(library)).toContainEqual({
      rule: "self.product != '3573-TL' || self.numDrives <= 4",
      message: 'numDrives must be 1 to 4 for a 3573-TL',
      fieldPath: '.numDrives',
    });
    const initiator = spec('TapeInitiator');
    expect(rules(initiator).map((r) => r.fieldPath)).toEqual(expect.arrayContaining(['.ports', '.chap']));
    const pool = rootSchema(buildCrd(RESOURCES.find((r) => r.kind === 'TapePool') as CrdResource));
    expect(rules(pool)).toContainEqual(expect.objectContaining({ rule: 'self.metadata.name.size() <= 32' }));
  });

  it('the initiator WWPN pattern accepts exactly what normalizeWwpn accepts', () => {
    const samples = [
      'naa.5001438001234567',
      'NAA.5001438001234567',
      '50:01:43:80:01:23:45:67',
      '5001438001234567',
      '50014380012345678',
      'naa.500143800123456',
      '50:01:43:80:01:23:45',
      '5001:4380:0123:4567',
      'naa.500143800123456g',
      '',
    ];
    for (const s of samples) expect(WWPN_INPUT.test(s), s).toBe(normalizeWwpn(s) !== undefined);
  });
});
