import { z } from 'zod';
import { isNode, StructuralSchemaError, type SchemaNode } from './json-schema.js';
import { CATEGORY, GROUP, VERSION, type CrdResource } from './resources.js';
import { toStructural } from './structural.js';
import { structuralProblems } from './structural-problems.js';
import { boundRuleStrings, immutabilityRules, ruleValidations, type Validation } from './validations.js';

/** A zod schema as a structural OpenAPI schema (input side for spec: defaults are optional). */
function structural(schema: z.ZodType, io: 'input' | 'output', path: string): SchemaNode {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io,
    reused: 'inline',
    cycles: 'throw',
    unrepresentable: 'throw',
  }) as SchemaNode;
  return toStructural(json, path);
}

const addValidations = (node: SchemaNode, validations: Validation[]) => {
  if (validations.length === 0) return;
  const existing = (node['x-kubernetes-validations'] as Validation[] | undefined) ?? [];
  node['x-kubernetes-validations'] = [...existing, ...validations];
};

/**
 * The structural schema of a resource's `spec`, from the gitops model: JSON Schema for what it
 * can say, CEL (`x-kubernetes-validations`) for the model's rules and immutable fields.
 */
export function specSchema(resource: CrdResource): SchemaNode {
  const spec = structural(resource.spec, 'input', 'spec');
  boundRuleStrings(spec, resource.ruleStringBounds);
  addValidations(spec, ruleValidations(resource.rules));
  for (const { node, validation } of immutabilityRules(spec, resource)) addValidations(node, [validation]);
  return spec;
}

/**
 * The structural schema of `status`: what the sync writes back. Conditions are a list keyed by
 * type, so a server-side apply of one condition merges instead of replacing the others.
 */
export function statusSchema(resource: CrdResource): SchemaNode {
  const status = structural(resource.status, 'output', 'status');
  status.description = 'Observed state, written by the GitOps source from the appliance records.';
  const conditions = (status.properties as Record<string, SchemaNode> | undefined)?.conditions;
  if (isNode(conditions)) {
    conditions['x-kubernetes-list-type'] = 'map';
    conditions['x-kubernetes-list-map-keys'] = ['type'];
  }
  return status;
}

/** `<plural>.<group>`, the CRD's required name. */
export const crdName = (resource: CrdResource) => `${resource.plural}.${GROUP}`;

/** The CustomResourceDefinition of one resource; throws if its schema is not structural. */
export function buildCrd(resource: CrdResource) {
  const openAPIV3Schema: SchemaNode = {
    description: resource.description,
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: specSchema(resource),
      status: statusSchema(resource),
    },
    required: ['spec'],
  };
  if (resource.maxNameLength !== undefined)
    openAPIV3Schema['x-kubernetes-validations'] = [
      {
        rule: `self.metadata.name.size() <= ${resource.maxNameLength}`,
        message: `metadata.name: at most ${resource.maxNameLength} characters for a ${resource.kind}`,
      },
    ];
  const problems = structuralProblems(openAPIV3Schema);
  if (problems.length > 0) throw new StructuralSchemaError(resource.kind, problems.join('; '));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crdName(resource),
      labels: { 'app.kubernetes.io/part-of': 'vtl' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular: resource.singular,
        shortNames: resource.shortNames,
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...resource.printerColumns,
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}
