import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

/** A Kubernetes object as the stand-in stores it (only metadata is typed). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  plural: string;
  namespace: string;
  revision: number;
  object: KubeObject;
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * The stand-in's storage, like etcd under a kube-apiserver: one revision counter for every
 * object (the resourceVersion), an event history a watch replays from, compaction.
 */
export function objectStore() {
  const objects = new Map<string, KubeObject>();
  const plurals = new Map<string, string>();
  let history: StoreEvent[] = [];
  const listeners = new Set<(e: StoreEvent) => void>();
  const state = { revision: 1, compactedAt: 0 };
  const key = (plural: string, namespace: string, name: string) => `${plural}/${namespace}/${name}`;

  function record(type: StoreEvent['type'], plural: string, obj: KubeObject) {
    state.revision += 1;
    obj.metadata.resourceVersion = String(state.revision);
    const event: StoreEvent = {
      type,
      plural,
      namespace: obj.metadata.namespace ?? '',
      revision: state.revision,
      object: clone(obj),
    };
    history.push(event);
    for (const l of listeners) l(event);
    return clone(obj);
  }

  return {
    get revision() {
      return state.revision;
    },
    get compactedAt() {
      return state.compactedAt;
    },
    list(plural: string, namespace: string): KubeObject[] {
      return [...objects.entries()]
        .filter(([k]) => plurals.get(k) === plural && k.startsWith(`${plural}/${namespace}/`))
        .map(([, o]) => clone(o));
    },
    get(plural: string, namespace: string, name: string): KubeObject | undefined {
      const obj = objects.get(key(plural, namespace, name));
      return obj && clone(obj);
    },
    /** Stores a new object: server-set metadata, generation 1, status dropped (subresource). */
    create(plural: string, namespace: string, body: KubeObject): KubeObject {
      const obj: KubeObject = {
        ...clone(body),
        metadata: {
          ...clone(body.metadata),
          namespace,
          uid: randomUUID(),
          generation: 1,
          creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      };
      delete obj.status;
      delete obj.metadata.deletionTimestamp;
      const k = key(plural, namespace, obj.metadata.name);
      objects.set(k, obj);
      plurals.set(k, plural);
      return record('ADDED', plural, obj);
    },
    /** Test setup of objects without the subresource rules (Secrets). */
    put(plural: string, namespace: string, body: KubeObject): KubeObject {
      const k = key(plural, namespace, body.metadata.name);
      const existed = objects.has(k);
      const obj = { ...clone(body), metadata: { ...clone(body.metadata), namespace, uid: randomUUID() } };
      objects.set(k, obj);
      plurals.set(k, plural);
      return record(existed ? 'MODIFIED' : 'ADDED', plural, obj);
    },
    /**
     * The main resource: spec and metadata change, status is kept; generation moves when the
     * spec changed; an object being deleted goes once its finalizers are empty.
     */
    update(plural: string, current: KubeObject, body: KubeObject): KubeObject {
      const next: KubeObject = {
        ...clone(body),
        metadata: {
          ...clone(body.metadata),
          name: current.metadata.name,
          namespace: current.metadata.namespace,
          uid: current.metadata.uid,
          creationTimestamp: current.metadata.creationTimestamp,
          generation:
            (current.metadata.generation ?? 1) + (isDeepStrictEqual(body.spec, current.spec) ? 0 : 1),
          ...(current.metadata.deletionTimestamp
            ? { deletionTimestamp: current.metadata.deletionTimestamp }
            : {}),
        },
        ...(current.status !== undefined ? { status: clone(current.status) } : {}),
      };
      if (current.status === undefined) delete next.status;
      const k = key(plural, current.metadata.namespace ?? '', current.metadata.name);
      if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
        objects.delete(k);
        return record('DELETED', plural, next);
      }
      if (
        isDeepStrictEqual(
          { ...next, metadata: { ...next.metadata, resourceVersion: undefined } },
          { ...current, metadata: { ...current.metadata, resourceVersion: undefined } },
        )
      )
        return clone(current); // A no-op update does not move the resourceVersion.
      objects.set(k, next);
      return record('MODIFIED', plural, next);
    },
    /** The status subresource: only status changes; generation never moves. */
    updateStatus(plural: string, current: KubeObject, body: KubeObject): KubeObject {
      const next: KubeObject = { ...clone(current), status: clone(body.status) };
      if (isDeepStrictEqual(next.status, current.status)) return clone(current);
      objects.set(key(plural, current.metadata.namespace ?? '', current.metadata.name), next);
      return record('MODIFIED', plural, next);
    },
    /** With finalizers: only marks (deletionTimestamp). Without: removes. */
    delete(plural: string, current: KubeObject): KubeObject {
      const k = key(plural, current.metadata.namespace ?? '', current.metadata.name);
      if (current.metadata.finalizers?.length) {
        if (current.metadata.deletionTimestamp) return clone(current);
        const next = clone(current);
        next.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        objects.set(k, next);
        return record('MODIFIED', plural, next);
      }
      objects.delete(k);
      return record('DELETED', plural, clone(current));
    },
    /** Events after `revision`, or undefined when history before it was compacted away (410). */
    since(revision: number): StoreEvent[] | undefined {
      if (revision < state.compactedAt) return undefined;
      return history.filter((e) => e.revision > revision);
    },
    /** Forgets every event so far: a watch from any resourceVersion seen until now gets 410. */
    compact() {
      state.compactedAt = state.revision + 1;
      history = [];
    },
    subscribe(listener: (e: StoreEvent) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
