import { KINDS, type KindName } from '../model/index.js';
import type { ManifestFile } from '../contract.js';
import type { CustomResource } from './informers.js';

/** The finalizer the adapter keeps on every custom resource until the appliance let it go. */
export const FINALIZER = 'vtl.appliance.io/gitops';

/** Annotations Kubernetes tools write that say nothing to the appliance. */
const NOISE =
  /^(kubectl\.kubernetes\.io\/|meta\.helm\.sh\/|kustomize\.toolkit\.fluxcd\.io\/|argocd\.argoproj\.io\/)/;

/** What the error of a document names: `<plural>/<name>` (one document per file). */
export const fileOf = (kind: KindName, name: string) => `${KINDS[kind].plural}/${name}`;

export const isDeleting = (cr: CustomResource) => Boolean(cr.metadata.deletionTimestamp);

/**
 * The desired document set of the namespace: every custom resource not being deleted, as the
 * manifest a person would write (apiVersion, kind, name, the appliance's annotations, spec).
 * A resource being deleted is left out, so the apply prunes what it declared.
 */
export function desiredDocuments(resources: Iterable<[KindName, CustomResource]>): ManifestFile[] {
  const files: ManifestFile[] = [];
  for (const [kind, cr] of resources) {
    if (isDeleting(cr)) continue;
    const annotations = Object.fromEntries(
      Object.entries(cr.metadata.annotations ?? {}).filter(([k]) => !NOISE.test(k)),
    );
    const doc = {
      apiVersion: cr.apiVersion,
      kind,
      metadata: {
        name: cr.metadata.name,
        ...(cr.metadata.generation !== undefined ? { generation: cr.metadata.generation } : {}),
        ...(Object.keys(annotations).length ? { annotations } : {}),
      },
      spec: cr.spec ?? {},
    };
    // JSON is YAML: exact, and no YAML ambiguity (a "no" staying a string).
    files.push({ file: fileOf(kind, cr.metadata.name), content: JSON.stringify(doc) });
  }
  return files.sort((a, b) => a.file.localeCompare(b.file));
}

interface SecretKeyRef {
  name: string;
  key?: string;
}

/** The Secrets the resources' `secretRef`s name (remote keys, CHAP secrets). */
export function referencedSecrets(resources: Iterable<[KindName, CustomResource]>): Map<string, string[]> {
  const refs = new Map<string, string[]>();
  const add = (ref: SecretKeyRef | undefined, owner: string) => {
    if (!ref?.name) return;
    refs.set(ref.name, [...(refs.get(ref.name) ?? []), owner]);
  };
  for (const [kind, cr] of resources) {
    if (isDeleting(cr)) continue;
    const spec = (cr.spec ?? {}) as {
      secretRef?: SecretKeyRef;
      chap?: { secretRef?: SecretKeyRef; mutualSecretRef?: SecretKeyRef };
    };
    const owner = `${kind}/${cr.metadata.name}`;
    add(spec.secretRef, owner);
    add(spec.chap?.secretRef, owner);
    add(spec.chap?.mutualSecretRef, owner);
  }
  return refs;
}
