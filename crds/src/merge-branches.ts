import { childPath, type SchemaNode } from './json-schema.js';

const FREE_FORM = 'x-kubernetes-preserve-unknown-fields';

/** Keywords merged structurally rather than kept only when every branch agrees. */
const STRUCTURAL = new Set([
  'type',
  'enum',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'nullable',
]);

/**
 * The narrowest single structural schema that accepts every branch of a union (already
 * structural): same-typed branches merge, `integer | string` is int-or-string, anything else is
 * free-form. Constraints survive only where all branches agree, so the result never refuses a
 * value the union accepts; the zod schema stays the precise check.
 */
export function mergeBranches(branches: SchemaNode[], path: string): SchemaNode {
  if (branches.length === 1) return branches[0] as SchemaNode;
  if (branches.some((b) => b.type === undefined)) return branchesWithoutType(branches);
  const types = new Set(branches.map((b) => b.type as string));
  if (types.size === 2 && types.has('integer') && types.has('number')) {
    return mergeBranches(
      branches.map((b) => ({ ...b, type: 'number' })),
      path,
    );
  }
  if (types.size === 2 && types.has('integer') && types.has('string')) {
    return { 'x-kubernetes-int-or-string': true };
  }
  if (types.size > 1) return { [FREE_FORM]: true };

  const out: SchemaNode = { type: branches[0]?.type };
  if (branches.some((b) => b.nullable === true)) out.nullable = true;
  if (branches.every((b) => Array.isArray(b.enum))) {
    out.enum = [...new Set(branches.flatMap((b) => b.enum as unknown[]))];
  }
  for (const [keyword, value] of Object.entries(branches[0] as SchemaNode)) {
    if (STRUCTURAL.has(keyword)) continue;
    if (branches.every((b) => JSON.stringify(b[keyword]) === JSON.stringify(value))) out[keyword] = value;
  }
  if (out.type === 'object') mergeObjects(branches, out, path);
  if (out.type === 'array') {
    out.items = mergeBranches(
      branches.map((b) => b.items as SchemaNode),
      childPath(path, 'items'),
    );
  }
  return out;
}

function branchesWithoutType(branches: SchemaNode[]): SchemaNode {
  if (
    branches.every(
      (b) => b['x-kubernetes-int-or-string'] === true || ['integer', 'string'].includes(b.type as string),
    )
  ) {
    return { 'x-kubernetes-int-or-string': true };
  }
  return { [FREE_FORM]: true };
}

function mergeObjects(branches: SchemaNode[], out: SchemaNode, path: string) {
  if (branches.some((b) => b[FREE_FORM] === true)) out[FREE_FORM] = true;
  const maps = branches.filter((b) => b.additionalProperties !== undefined);
  const names = [...new Set(branches.flatMap((b) => Object.keys((b.properties as SchemaNode) ?? {})))];
  if (names.length > 0 && maps.length > 0) {
    // A record branch and a fixed-shape branch have no common typed form.
    delete out.additionalProperties;
    out[FREE_FORM] = true;
    return;
  }
  if (maps.length > 0) {
    if (maps.length < branches.length) out[FREE_FORM] = true;
    else
      out.additionalProperties = mergeBranches(
        maps.map((b) => b.additionalProperties as SchemaNode),
        childPath(path, 'additionalProperties'),
      );
  }
  if (names.length > 0) {
    out.properties = Object.fromEntries(
      names.map((name) => {
        const candidates = branches
          .map((b) => (b.properties as Record<string, SchemaNode> | undefined)?.[name])
          .filter((p): p is SchemaNode => p !== undefined);
        return [name, mergeBranches(candidates, childPath(path, 'properties', name))];
      }),
    );
  }
  const required = branches.map((b) => new Set((b.required as string[]) ?? []));
  const common = [...(required[0] ?? [])].filter((name) => required.every((r) => r.has(name)));
  if (common.length > 0) out.required = common;
}
