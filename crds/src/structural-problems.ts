import { ALLOWED_KEYWORDS, childPath, isKubernetesExtension, isNode, NODE_TYPES } from './json-schema.js';

/** Keywords that never appear in the schemas we generate: they break structural-schema rules. */
const FORBIDDEN = ['$ref', '$defs', 'definitions', 'const', 'anyOf', 'oneOf', 'allOf', 'not', 'uniqueItems'];

const valueType = (v: unknown) =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? 'integer'
      : 'number'
    : Array.isArray(v)
      ? 'array'
      : typeof v;

/**
 * Every reason `schema` is not a Kubernetes structural schema as this package emits them (an
 * empty list when it is): each node typed or explicitly free-form, objects and arrays well
 * formed, required names declared, enum values of the node's type, only CRD keywords.
 */
export function structuralProblems(schema: unknown, path = ''): string[] {
  const at = path || '<root>';
  if (!isNode(schema)) return [`${at}: not a schema object`];
  const problems: string[] = [];
  const say = (message: string) => problems.push(`${at}: ${message}`);

  for (const keyword of Object.keys(schema)) {
    if (FORBIDDEN.includes(keyword)) say(`${keyword} is not allowed`);
    else if (!ALLOWED_KEYWORDS.has(keyword) && !isKubernetesExtension(keyword))
      say(`unknown keyword ${keyword}`);
  }
  const freeForm = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const type = schema.type;
  if (type === undefined) {
    if (!freeForm && !intOrString) say('has no type and is not marked x-kubernetes-preserve-unknown-fields');
  } else if (!(NODE_TYPES as readonly unknown[]).includes(type)) say(`type ${String(type)} is not allowed`);
  if (intOrString && type !== undefined) say('x-kubernetes-int-or-string must not carry a type');

  if (Array.isArray(schema.enum)) {
    const wrong = schema.enum.filter(
      (v) =>
        type !== undefined && valueType(v) !== type && !(type === 'number' && valueType(v) === 'integer'),
    );
    if (wrong.length > 0) say(`enum values ${JSON.stringify(wrong)} are not of type ${String(type)}`);
  }
  const props = schema.properties;
  const extra = schema.additionalProperties;
  if ((props !== undefined || extra !== undefined || schema.required !== undefined) && type !== 'object') {
    say('properties, additionalProperties or required on a non-object');
  }
  if (props !== undefined && extra !== undefined)
    say('properties and additionalProperties are mutually exclusive');
  if (extra !== undefined && !isNode(extra)) say('additionalProperties must be a schema');
  if (Array.isArray(schema.required)) {
    for (const name of schema.required as string[]) {
      if (!freeForm && !(isNode(props) && name in props)) say(`required ${name} is not a declared property`);
    }
  }
  if (type === 'array' && !isNode(schema.items)) say('an array must have a single items schema');
  if (schema.items !== undefined && type !== 'array') say('items on a non-array');

  if (isNode(props)) {
    for (const [name, child] of Object.entries(props)) {
      problems.push(...structuralProblems(child, childPath(path, 'properties', name)));
    }
  }
  if (isNode(extra)) problems.push(...structuralProblems(extra, childPath(path, 'additionalProperties')));
  if (isNode(schema.items)) problems.push(...structuralProblems(schema.items, childPath(path, 'items')));
  return problems;
}
