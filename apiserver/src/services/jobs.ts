import {
  CatalogEntry,
  Job,
  JobKind,
  JobState,
  RemoteRecord,
  badRequest,
  isJobActive,
  keys,
  notFound,
} from '@vtl/api';
import type { Store } from '@vtl/store';
import { busyLabel } from '@vtl/domain';
import type { z } from 'zod';
import type { JobListQuery } from '@vtl/api';

/** A stored remote named in a request body or query: 400 when it does not exist. */
export async function referencedRemote(store: Store, id: number): Promise<RemoteRecord> {
  const found = await store.get(keys.remotes.one(id), RemoteRecord);
  if (!found) throw badRequest(`remote_id ${id}: no such remote; GET /api/remotes lists them.`);
  return found.value;
}

/** Catalog generations of a remote for one label (optionally of one system). */
export async function catalogGenerations(store: Store, remoteId: number, label: string, system?: string) {
  const items = (await store.list(keys.catalog.remote(remoteId), CatalogEntry)).items.map((i) => i.value);
  return items.filter((e) => e.cart_label === label && (system === undefined || e.system_name === system));
}

/** 409 when another unfinished job already works on the label. */
export function refuseBusyLabel(jobs: Job[], label: string): void {
  const busy = jobs.filter((j) => j.label === label && isJobActive(j.state));
  if (busy.length > 0) throw busyLabel(label, busy);
}

const list = <T extends string>(value: string | undefined, schema: z.ZodEnum<Record<T, T>>, what: string) => {
  if (!value) return undefined;
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of parts)
    if (!schema.options.includes(p as T))
      throw badRequest(`${what} "${p}" is not one of ${schema.options.join(', ')}.`);
  return new Set(parts);
};

/** GET /api/jobs: newest first, filtered. */
export function listJobs(jobs: readonly Job[], q: z.infer<typeof JobListQuery>): Job[] {
  const states = list(q.state, JobState, 'state');
  const kinds = list(q.kind, JobKind, 'kind');
  const label = q.label?.trim().toUpperCase();
  return jobs
    .filter(
      (j) =>
        (!states || states.has(j.state)) &&
        (!kinds || kinds.has(j.kind)) &&
        (!label || j.label === label) &&
        (q.remote_id === undefined || j.remote_id === q.remote_id),
    )
    .sort((a, b) => b.id - a.id)
    .slice(0, q.limit);
}

/** One job; 404 when unknown. */
export function getJob(jobs: readonly Job[], id: number): Job {
  const found = jobs.find((j) => j.id === id);
  if (!found) throw notFound(`No job ${id}; GET /api/jobs lists them.`);
  return found;
}
