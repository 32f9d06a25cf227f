import { z } from 'zod';
import type { SchemaNode } from './json-schema.js';
import { CATEGORY, GROUP, VERSION, type CrdResource } from './resources.js';
import { toStructural } from './structural.js';
import { structuralProblems } from './structural-problems.js';
import { StructuralSchemaError } from './json-schema.js';

/** The structural OpenAPI schema of a resource's `spec`, from its zod schema (input side: defaults optional). */
export function specSchema(resource: CrdResource): SchemaNode {
  const json = z.toJSONSchema(resource.spec, {
    target: 'openapi-3.0',
    io: 'input',
    reused: 'inline',
    cycles: 'throw',
    unrepresentable: 'throw',
  }) as SchemaNode;
  return toStructural(json, 'spec');
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
      status: {
        description: 'Observed state, written by the GitOps source from the appliance records.',
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
      },
    },
    required: ['spec'],
  };
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
