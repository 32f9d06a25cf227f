import { z } from 'zod';

/**
 * What every declared object shares (Kubernetes conventions: apiVersion/kind/metadata/spec/status,
 * camelCase fields, references by name). The group and version are the ones the CRDs already use
 * (crds/src/resources.ts), so one manifest works in Git and as a custom resource.
 */
export const GROUP = 'vtl.appliance.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/**
 * Annotation that lets a sync delete and re-create an object whose immutable field changed.
 * Destructive (a re-created library loses its cartridges' home), so it is opt-in per object.
 */
export const RECREATE_ANNOTATION = `${GROUP}/recreate-on-immutable-change`;

/** DNS-1123 label: what Kubernetes accepts as a name and every REST name rule here also takes. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const objectName = (max: number) =>
  z
    .string()
    .min(1, 'metadata.name is required')
    .max(max, `metadata.name: at most ${max} characters`)
    .regex(
      DNS_LABEL,
      'metadata.name: lowercase letters, digits and -, starting and ending with a letter or digit',
    );

/** metadata as Git and Kubernetes write it; fields the appliance does not use pass through. */
export const Metadata = (max = 63) =>
  z.looseObject({
    name: objectName(max),
    namespace: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    /** Set by Kubernetes on every spec change; a Git source uses its own revision instead. */
    generation: z.number().int().optional(),
  });
export type Metadata = z.infer<ReturnType<typeof Metadata>>;

export const ConditionType = z.enum(['Ready', 'Synced']);
export type ConditionType = z.infer<typeof ConditionType>;

/** A Kubernetes-style condition: lastTransitionTime changes only when status does. */
export const Condition = z.object({
  type: ConditionType,
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().describe('CamelCase reason, e.g. ImmutableFieldChanged'),
  message: z.string().describe('What happened and what to do next'),
  lastTransitionTime: z.string(),
});
export type Condition = z.infer<typeof Condition>;

/** The status every kind carries; kinds add their own observed fields. */
export const statusFields = {
  observedGeneration: z.number().int().optional().describe('The metadata.generation this status reflects'),
  conditions: z.array(Condition).optional(),
};

/**
 * A reference to a secret registered through the API (PUT /api/gitops/secrets/{name}): sealed in
 * etcd like every other secret, write-only. Manifests never hold the secret value itself.
 */
export const SecretKeyRef = (defaultKey: string) =>
  z.strictObject({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(DNS_LABEL, 'secretRef.name: lowercase letters, digits and -')
      .describe('Name of a secret registered with PUT /api/gitops/secrets/{name}'),
    key: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[A-Za-z0-9_.-]+$/, 'secretRef.key: letters, digits, _ . -')
      .default(defaultKey)
      .describe(`Key inside the secret (default ${defaultKey})`),
  });
export type SecretKeyRef = z.infer<ReturnType<typeof SecretKeyRef>>;

/**
 * A rule JSON Schema cannot express, as data: `rule` is CEL over the spec (`self`), for the CRD's
 * `x-kubernetes-validations`; the sync engine checks the same rule in TypeScript (refinements.ts).
 */
export interface SpecRule {
  rule: string;
  message: string;
  /** The spec field the message is about (for error reports), dotted. */
  field: string;
}
