import {
  ALLOWED_KEYWORDS,
  childPath,
  isKubernetesExtension,
  isNode,
  SCALAR_TYPES,
  StructuralSchemaError,
  type SchemaNode,
} from './json-schema.js';
import { mergeBranches } from './merge-branches.js';

/** Formats kube-openapi knows; any other format would only earn a warning, so it is dropped. */
const KNOWN_FORMATS = new Set([
  'int32',
  'int64',
  'float',
  'double',
  'byte',
  'binary',
  'password',
  'date',
  'date-time',
  'datetime',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uri',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
]);

/** zod bounds every integer to the safe-integer range; a CRD integer is int64, so these say nothing. */
const SAFE_BOUNDS: unknown[] = [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];

/** Keywords with no meaning for a CRD, dropped without loss of validation. */
const DROPPED = new Set([
  '$schema',
  '$id',
  'id',
  'examples',
  'readOnly',
  'writeOnly',
  'deprecated',
  'propertyNames',
  'contentEncoding',
  'contentMediaType',
]);

/** Annotation keywords a union node may carry beside `anyOf`/`oneOf`. */
const UNION_SIBLINGS = new Set(['description', 'title', 'default', 'example', 'nullable']);

/** Kubernetes validates `pattern` with Go's RE2: no lookaround, no back-references. */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]/;

/**
 * Turns a JSON Schema (zod's `openapi-3.0` output) into a Kubernetes structural schema: every
 * node typed (or marked as free-form), no `$ref`, `const` or type-bearing unions, no
 * `additionalProperties: false`. Throws {@link StructuralSchemaError} for what has no faithful form.
 */
export function toStructural(schema: SchemaNode, path = ''): SchemaNode {
  if ('$ref' in schema) throw new StructuralSchemaError(path, '$ref cannot be used; inline reused schemas');
  for (const defs of ['$defs', 'definitions']) {
    if (isNode(schema[defs]) && Object.keys(schema[defs]).length > 0) {
      throw new StructuralSchemaError(path, `${defs} cannot be used; inline reused schemas`);
    }
  }
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) return convertUnion(schema, path);
  if (Array.isArray(schema.allOf)) return convertAllOf(schema, path);
  return convertNode(schema, path);
}

function convertNode(schema: SchemaNode, path: string): SchemaNode {
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (DROPPED.has(keyword)) continue;
    switch (keyword) {
      case 'type':
      case 'additionalProperties':
      case 'uniqueItems':
        break; // resolved below, they depend on the rest of the node
      case '$defs':
      case 'definitions':
        break; // empty, checked by toStructural
      case 'const':
        out.enum = [value];
        break;
      case 'enum':
        out.enum = (value as unknown[]).filter((v) => v !== null);
        if ((value as unknown[]).includes(null)) out.nullable = true;
        if ((out.enum as unknown[]).length === 0) {
          throw new StructuralSchemaError(path, 'a null-only schema cannot be used');
        }
        break;
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, SchemaNode>).map(([name, child]) => [
            name,
            toStructural(child, childPath(path, 'properties', name)),
          ]),
        );
        break;
      case 'items':
        if (!isNode(value)) throw new StructuralSchemaError(path, 'tuple `items` cannot be used');
        out.items = toStructural(value, childPath(path, 'items'));
        break;
      case 'format':
        if (KNOWN_FORMATS.has(value as string)) out.format = value;
        break;
      case 'minimum':
      case 'maximum':
        if (!SAFE_BOUNDS.includes(value)) out[keyword] = value;
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // Draft 2019+ puts the bound here; OpenAPI 3.0 (and Kubernetes) wants a flag beside it.
        if (typeof value === 'number') {
          out[keyword === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
          out[keyword] = true;
        } else out[keyword] = value;
        break;
      case 'pattern':
        if (NOT_RE2.test(value as string)) {
          throw new StructuralSchemaError(
            path,
            `pattern ${String(value)} uses lookaround or back-references`,
          );
        }
        out.pattern = value;
        break;
      default:
        if (!ALLOWED_KEYWORDS.has(keyword) && !isKubernetesExtension(keyword)) {
          throw new StructuralSchemaError(path, `keyword ${keyword} has no CRD equivalent`);
        }
        out[keyword] = value;
    }
  }
  const type = resolveType(schema, out, path);
  if (type === undefined) return freeForm(out);
  out.type = type;
  if (type === 'object') applyAdditionalProperties(schema.additionalProperties, out, path);
  if (type === 'array') applyUniqueItems(schema.uniqueItems, out, path);
  return orderKeys(out);
}

/** The node's single type; `undefined` for a schema that accepts anything. */
function resolveType(schema: SchemaNode, out: SchemaNode, path: string): string | undefined {
  let type = schema.type;
  if (Array.isArray(type)) {
    if (type.includes('null')) out.nullable = true;
    const rest = type.filter((t) => t !== 'null');
    if (rest.length !== 1)
      throw new StructuralSchemaError(path, `type list ${type.join(',')} cannot be used`);
    type = rest[0];
  }
  if (type === 'null') throw new StructuralSchemaError(path, 'a null-only schema cannot be used');
  if (typeof type === 'string') return type;
  if (Array.isArray(out.enum) && out.enum.length > 0) return typeOfValues(out.enum, path);
  if ('properties' in out || 'additionalProperties' in schema) return 'object';
  if ('items' in out) return 'array';
  return undefined;
}

function typeOfValues(values: unknown[], path: string): string {
  const types = new Set(
    values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)),
  );
  if (types.size === 2 && types.has('integer') && types.has('number')) return 'number';
  const [only] = types;
  if (types.size !== 1 || !(SCALAR_TYPES as readonly string[]).includes(only ?? '')) {
    throw new StructuralSchemaError(path, 'enum values of mixed or non-scalar types cannot be used');
  }
  return only as string;
}

function applyAdditionalProperties(value: unknown, out: SchemaNode, path: string) {
  // Pruning drops unknown fields, and Kubernetes forbids `additionalProperties` beside `properties`.
  if (value === undefined || value === false) return;
  if (value === true || (isNode(value) && Object.keys(value).length === 0)) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return;
  }
  if (!isNode(value)) throw new StructuralSchemaError(path, 'additionalProperties must be a schema');
  if ('properties' in out) {
    throw new StructuralSchemaError(path, 'properties and a typed additionalProperties cannot be combined');
  }
  out.additionalProperties = toStructural(value, childPath(path, 'additionalProperties'));
}

function applyUniqueItems(value: unknown, out: SchemaNode, path: string) {
  if (value !== true) return;
  const items = out.items as SchemaNode | undefined;
  if (!(SCALAR_TYPES as readonly unknown[]).includes(items?.type)) {
    throw new StructuralSchemaError(path, 'uniqueItems is only representable for lists of scalars');
  }
  out['x-kubernetes-list-type'] = 'set';
}

function freeForm(out: SchemaNode): SchemaNode {
  const kept: SchemaNode = { 'x-kubernetes-preserve-unknown-fields': true };
  for (const k of ['description', 'title', 'default', 'nullable']) if (k in out) kept[k] = out[k];
  return kept;
}

function convertUnion(schema: SchemaNode, path: string): SchemaNode {
  const branches = (schema.anyOf ?? schema.oneOf) as SchemaNode[];
  const annotations: SchemaNode = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'anyOf' || keyword === 'oneOf' || DROPPED.has(keyword)) continue;
    if (!UNION_SIBLINGS.has(keyword)) {
      throw new StructuralSchemaError(path, `keyword ${keyword} beside a union cannot be used`);
    }
    annotations[keyword] = value;
  }
  // `T | null` becomes a nullable T.
  const kept: SchemaNode[] = [];
  branches.forEach((branch, i) => {
    if (isNullOnly(branch)) annotations.nullable = true;
    else kept.push(toStructural(branch, childPath(path, 'anyOf', i)));
  });
  if (kept.length === 0) throw new StructuralSchemaError(path, 'a null-only union cannot be used');
  if (kept.some((branch) => branch.nullable === true)) annotations.nullable = true;
  return orderKeys({ ...mergeBranches(kept, path), ...annotations });
}

function isNullOnly(schema: SchemaNode): boolean {
  if (schema.type === 'null' || ('const' in schema && schema.const === null)) return true;
  return Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => v === null);
}

function convertAllOf(schema: SchemaNode, path: string): SchemaNode {
  const { allOf, ...rest } = schema;
  const parts = [rest, ...(allOf as SchemaNode[])].map((part, i) =>
    toStructural(part, childPath(path, 'allOf', i)),
  );
  const merged: SchemaNode = {};
  for (const part of parts) {
    if ('x-kubernetes-preserve-unknown-fields' in part && !('type' in part)) continue;
    for (const [keyword, value] of Object.entries(part)) {
      if (keyword === 'properties') {
        merged.properties = { ...(merged.properties as SchemaNode), ...(value as SchemaNode) };
      } else if (keyword === 'required') {
        merged.required = [...new Set([...((merged.required as string[]) ?? []), ...(value as string[])])];
      } else if (keyword in merged && JSON.stringify(merged[keyword]) !== JSON.stringify(value)) {
        throw new StructuralSchemaError(path, `allOf members disagree on ${keyword}`);
      } else merged[keyword] = value;
    }
  }
  return orderKeys(Object.keys(merged).length === 0 ? freeForm({}) : merged);
}

/** A stable keyword order, so the generated YAML reads the same way at every node. */
const ORDER = ['description', 'type', 'format', 'nullable', 'default', 'enum'];

function orderKeys(node: SchemaNode): SchemaNode {
  const rank = (k: string) => {
    const i = ORDER.indexOf(k);
    return i === -1 ? ORDER.length : i;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b)));
}
