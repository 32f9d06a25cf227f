import path from 'node:path';
import { stringify } from 'yaml';
import { buildCrd, crdName } from './crd.js';
import { GROUP, RESOURCES } from './resources.js';

/** The repository root, from `crds/src` (tests) or `crds/dist` (the generator). */
export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

/** Directories that hold the generated CRDs, relative to the repository root. */
export const CRD_DIRS = ['crds/generated', 'charts/vtl/files/crds'];

/** Whether a file in a CRD directory is one of ours (others there are left alone). */
export const isGeneratedName = (name: string) => name.endsWith(`.${GROUP}.yaml`);

const HEADER =
  '# Generated from the zod schemas by crds/src/generate.ts; do not edit.\n' +
  '# Regenerate: npx tsc -b crds && node crds/dist/generate.js\n';

/** Every CRD as `<plural>.<group>.yaml` and its YAML text. */
export function crdFiles(): { name: string; text: string }[] {
  return RESOURCES.map((resource) => ({
    name: `${crdName(resource)}.yaml`,
    text: HEADER + stringify(buildCrd(resource), { lineWidth: 0, singleQuote: true }),
  }));
}

/**
 * kustomization.yaml of a CRD directory, so `kubectl kustomize` (or `kubectl apply -k`) installs
 * the CRDs without the chart.
 */
export function kustomizationFile(): { name: string; text: string } {
  const resources = RESOURCES.map((resource) => `${crdName(resource)}.yaml`).sort();
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources,
  };
  return { name: 'kustomization.yaml', text: HEADER + stringify(kustomization, { lineWidth: 0 }) };
}
