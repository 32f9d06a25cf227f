import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StructuralSchemaError, type SchemaNode } from './json-schema.js';
import { toStructural } from './structural.js';
import { structuralProblems } from './structural-problems.js';

const fromZod = (schema: z.ZodType) =>
  toStructural(
    z.toJSONSchema(schema, {
      target: 'openapi-3.0',
      io: 'input',
      reused: 'inline',
      cycles: 'throw',
    }) as SchemaNode,
  );

/** Converts and asserts the result passes the structural walk, so every case checks both. */
const structural = (schema: z.ZodType) => {
  const out = fromZod(schema);
  expect(structuralProblems(out)).toEqual([]);
  return out;
};

const prop = (node: SchemaNode, name: string) => (node.properties as Record<string, SchemaNode>)[name];

describe('toStructural', () => {
  it('drops additionalProperties: false of strict objects and keeps required', () => {
    const out = structural(z.strictObject({ a: z.string(), b: z.number().optional() }));
    expect(out).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a'],
    });
  });

  it('turns const into a one-value enum', () => {
    expect(structural(z.object({ k: z.literal('x') })).properties).toEqual({
      k: { type: 'string', enum: ['x'] },
    });
  });

  it('merges a union of literals into one enum', () => {
    expect(prop(structural(z.object({ k: z.union([z.literal('a'), z.literal('b')]) })), 'k')).toEqual({
      type: 'string',
      enum: ['a', 'b'],
    });
  });

  it('makes T | null a nullable T', () => {
    expect(prop(structural(z.object({ a: z.union([z.string(), z.null()]) })), 'a')).toEqual({
      type: 'string',
      nullable: true,
    });
    expect(prop(structural(z.object({ a: z.number().int().nullable() })), 'a')).toEqual({
      type: 'integer',
      nullable: true,
    });
  });

  it('drops the safe-integer bounds zod puts on every integer but keeps real ones', () => {
    expect(prop(structural(z.object({ n: z.number().int().min(1) })), 'n')).toEqual({
      type: 'integer',
      minimum: 1,
    });
  });

  it('marks unknown values and untyped records as preserve-unknown-fields', () => {
    const out = structural(z.object({ any: z.unknown(), map: z.record(z.string(), z.unknown()) }));
    expect(prop(out, 'any')).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(prop(out, 'map')).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('keeps a typed record as additionalProperties', () => {
    expect(prop(structural(z.object({ m: z.record(z.string(), z.number().int()) })), 'm')).toEqual({
      type: 'object',
      additionalProperties: { type: 'integer' },
    });
  });

  it('merges a discriminated union into one object: required only where every branch has it', () => {
    const out = structural(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('a'), x: z.string() }),
        z.object({ kind: z.literal('b'), y: z.number() }),
      ]),
    );
    expect(out).toEqual({
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['a', 'b'] },
        x: { type: 'string' },
        y: { type: 'number' },
      },
      required: ['kind'],
    });
  });

  it('makes integer | string int-or-string and other mixed unions free-form', () => {
    expect(prop(structural(z.object({ p: z.union([z.number().int(), z.string()]) })), 'p')).toEqual({
      'x-kubernetes-int-or-string': true,
    });
    expect(prop(structural(z.object({ p: z.union([z.boolean(), z.string()]) })), 'p')).toEqual({
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('merges an intersection of objects', () => {
    const out = structural(z.intersection(z.object({ a: z.string() }), z.object({ b: z.boolean() })));
    expect(out.required).toEqual(['a', 'b']);
    expect(Object.keys(out.properties as object)).toEqual(['a', 'b']);
  });

  it('keeps defaults and descriptions', () => {
    expect(prop(structural(z.object({ n: z.number().int().default(3).describe('count') })), 'n')).toEqual({
      description: 'count',
      type: 'integer',
      default: 3,
    });
  });

  it('turns a set of scalars into a set-typed list', () => {
    const json: SchemaNode = { type: 'array', items: { type: 'string' }, uniqueItems: true };
    expect(toStructural(json)).toEqual({
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
    });
  });

  it('refuses $ref, tuples, patterns RE2 cannot run and unknown keywords', () => {
    expect(() => toStructural({ $ref: '#/$defs/x' })).toThrow(StructuralSchemaError);
    expect(() => toStructural({ type: 'array', items: [{ type: 'string' }] })).toThrow(/tuple/);
    expect(() => toStructural({ type: 'string', pattern: '^(?!x)' })).toThrow(/lookaround/);
    expect(() => toStructural({ type: 'string', pattern: '(a)\\1' })).toThrow(/back-references/);
    expect(() => toStructural({ type: 'object', if: {} })).toThrow(/keyword if/);
    expect(() =>
      toStructural({ type: 'object', properties: {}, additionalProperties: { type: 'string' } }),
    ).toThrow(/cannot be combined/);
  });

  it('names the path of the offending node', () => {
    try {
      toStructural({
        type: 'object',
        properties: { a: { type: 'object', properties: { b: { $ref: '#' } } } },
      });
      expect.unreachable();
    } catch (err) {
      expect((err as StructuralSchemaError).path).toBe('properties.a.properties.b');
    }
  });
});

describe('structuralProblems', () => {
  it('reports untyped nodes, forbidden keywords, undeclared required names and mixed additionalProperties', () => {
    const problems = structuralProblems({
      type: 'object',
      properties: {
        untyped: {},
        union: { anyOf: [{ type: 'string' }] },
        list: { type: 'array' },
        both: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
        wrongEnum: { type: 'integer', enum: ['x'] },
      },
      required: ['missing'],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^properties\.untyped: has no type/),
        expect.stringMatching(/^properties\.union: anyOf is not allowed/),
        expect.stringMatching(/^properties\.list: an array must have a single items schema/),
        expect.stringMatching(
          /^properties\.both: properties and additionalProperties are mutually exclusive/,
        ),
        expect.stringMatching(/^properties\.wrongEnum: enum values/),
        expect.stringMatching(/^<root>: required missing is not a declared property/),
      ]),
    );
  });

  it('accepts free-form and int-or-string nodes without a type', () => {
    expect(
      structuralProblems({
        type: 'object',
        properties: {
          free: { 'x-kubernetes-preserve-unknown-fields': true },
          port: { 'x-kubernetes-int-or-string': true },
        },
      }),
    ).toEqual([]);
  });
});
