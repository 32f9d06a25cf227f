import fs from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { normalizeWwpn } from '@vtl/api';
import { CRD_DIRS, crdFiles, isGeneratedName, REPO_ROOT } from './crd-files.js';
import { buildCrd, crdName } from './crd.js';
import type { SchemaNode } from './json-schema.js';
import { GROUP, RESOURCES, VERSION, type CrdResource } from './resources.js';
import { WWPN_INPUT } from './schemas/initiator.js';
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

  it('has a structural schema with a required spec and a free-form status', () => {
    const root = rootSchema(crd);
    expect(structuralProblems(root)).toEqual([]);
    expect(root.required).toEqual(['spec']);
    expect((root.properties as Record<string, SchemaNode>).status).toMatchObject({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
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

  it('has printer columns whose .spec paths exist with the column type', () => {
    const columns = crd.spec.versions[0]?.additionalPrinterColumns ?? [];
    expect(columns.at(-1)).toMatchObject({ name: 'Age', jsonPath: '.metadata.creationTimestamp' });
    for (const column of columns.filter((c) => c.jsonPath.startsWith('.spec.'))) {
      let node: SchemaNode | undefined = specOf(crd);
      for (const key of column.jsonPath.split('.').slice(2)) {
        node = (node?.properties as Record<string, SchemaNode> | undefined)?.[key];
      }
      expect(node?.type, column.jsonPath).toBe(column.type);
    }
  });
});

describe('spec schemas', () => {
  it('VirtualTapeLibrary and TapePool carry the API request bodies', () => {
    const library = specOf(buildCrd(RESOURCES.find((r) => r.kind === 'VirtualTapeLibrary') as CrdResource));
    expect(library.required).toEqual(['product', 'drive_product', 'num_drives', 'label_prefix', 'pool_id']);
    expect((library.properties as Record<string, SchemaNode>).num_slots).toMatchObject({
      default: 0,
      maximum: 400,
    });
    const pool = specOf(buildCrd(RESOURCES.find((r) => r.kind === 'TapePool') as CrdResource));
    expect(pool.required).toEqual(['name', 'path']);
  });

  it('TapeRemote takes the secret key from a Secret, never inline', () => {
    const remote = specOf(buildCrd(RESOURCES.find((r) => r.kind === 'TapeRemote') as CrdResource));
    const props = remote.properties as Record<string, SchemaNode>;
    expect(props.secret_key).toBeUndefined();
    expect(props.secretRef).toMatchObject({ type: 'object', required: ['name'] });
    expect(props.use_ssl).toMatchObject({ type: 'boolean', default: true });
    expect(props.endpoint).toMatchObject({ default: 's3.amazonaws.com' });
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
