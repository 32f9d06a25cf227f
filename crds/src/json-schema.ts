/** A JSON Schema or Kubernetes OpenAPI v3 schema node, as plain JSON. */
export type SchemaNode = { [keyword: string]: unknown };

/** A schema that cannot become a Kubernetes structural schema; `path` points at the node. */
export class StructuralSchemaError extends Error {
  readonly code = 'CRD_SCHEMA_NOT_STRUCTURAL';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path || '<root>'}: ${message}`);
    this.name = 'StructuralSchemaError';
  }
}

export const isNode = (v: unknown): v is SchemaNode =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const childPath = (path: string, ...segments: (string | number)[]) =>
  [path, ...segments].filter((s) => s !== '').join('.');

/** Types a structural schema node may declare. */
export const SCALAR_TYPES = ['string', 'integer', 'number', 'boolean'] as const;
export const NODE_TYPES = [...SCALAR_TYPES, 'object', 'array'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Keywords the apiextensions.k8s.io/v1 schema accepts and that we emit (anything else is refused). */
export const ALLOWED_KEYWORDS = new Set([
  'type',
  'format',
  'description',
  'title',
  'default',
  'example',
  'nullable',
  'enum',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'items',
  'minProperties',
  'maxProperties',
  'properties',
  'required',
  'additionalProperties',
]);

export const isKubernetesExtension = (keyword: string) => keyword.startsWith('x-kubernetes-');
