import type { SpecRule } from '@vtl/gitops';
import { isNode, StructuralSchemaError, type SchemaNode } from './json-schema.js';
import type { CrdResource } from './resources.js';

/** One `x-kubernetes-validations` entry (apiextensions.k8s.io/v1 ValidationRule). */
export interface Validation {
  rule: string;
  message: string;
  /** Where the API server reports the failure, relative to the node the rule is on. */
  fieldPath?: string;
}

/** The model's refinements, as CEL rules on the spec node (`self` is the spec, as in the model). */
export const ruleValidations = (rules: readonly SpecRule[]): Validation[] =>
  rules.map((r) => ({ rule: r.rule, message: r.message, fieldPath: `.${r.field}` }));

const properties = (node: SchemaNode) => (node.properties ?? {}) as Record<string, SchemaNode>;

/**
 * Immutability of each field as a transition rule. A field the API server always sets (required,
 * or defaulted) gets `self == oldSelf` on its own node; an optional one without a default gets a
 * rule on its parent, since a rule on the field never runs when the field is added or removed.
 */
export function immutabilityRules(
  spec: SchemaNode,
  resource: CrdResource,
): { node: SchemaNode; validation: Validation }[] {
  return resource.immutableFields.map((dotted) => {
    const keys = dotted.split('.');
    const leaf = keys.pop()!;
    let parent = spec;
    for (const key of keys) {
      const next = properties(parent)[key];
      if (!isNode(next))
        throw new StructuralSchemaError(`spec.${dotted}`, 'immutable field not in the schema');
      parent = next;
    }
    const node = properties(parent)[leaf];
    if (!isNode(node)) throw new StructuralSchemaError(`spec.${dotted}`, 'immutable field not in the schema');
    const message =
      `spec.${dotted} is immutable: delete the ${resource.kind} and create it again to change it` +
      (resource.kind === 'VirtualTapeLibrary' ? ' (that deletes the library and its cartridges)' : '');
    const alwaysSet = ((parent.required as string[] | undefined) ?? []).includes(leaf) || 'default' in node;
    if (alwaysSet) return { node, validation: { rule: 'self == oldSelf', message } };
    return {
      node: parent,
      validation: {
        rule: `has(self.${leaf}) == has(oldSelf.${leaf}) && (!has(self.${leaf}) || self.${leaf} == oldSelf.${leaf})`,
        message,
        fieldPath: `.${leaf}`,
      },
    };
  });
}

/**
 * Bounds for strings the model leaves unbounded but a CEL rule reads: the API server estimates a
 * rule's cost from the longest string it may see, and refuses a CRD whose rules could exceed the
 * per-call budget (an unbounded string counts as the whole 3 MB request).
 */
export function boundRuleStrings(spec: SchemaNode, bounds: Record<string, number> | undefined): void {
  for (const [field, max] of Object.entries(bounds ?? {})) {
    const node = properties(spec)[field];
    if (!isNode(node) || node.type !== 'string')
      throw new StructuralSchemaError(`spec.${field}`, 'not a string');
    if (node.maxLength === undefined) node.maxLength = max;
  }
}
