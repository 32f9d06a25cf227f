import { stringify } from 'yaml';
import type { Names, ResourceType, Row } from './resources.js';

/** The GitOps API version manifests carry (docs/gitops.md). */
export const API_VERSION = 'vtl.appliance.io/v1alpha1';

/**
 * Rows as YAML: for a kind GitOps declares, manifests `vtl apply -f` takes back (one document
 * each); for the others (cartridges, jobs) the REST records.
 */
export function yamlOf(type: ResourceType, rows: Row[], names: Names, one: boolean): string {
  if (!type.manifest) return stringify(one ? rows[0] : rows);
  return rows
    .map((r) => {
      const m = type.manifest!(r, names);
      return stringify({ apiVersion: API_VERSION, kind: m.kind, metadata: { name: m.name }, spec: m.spec });
    })
    .join('---\n');
}
