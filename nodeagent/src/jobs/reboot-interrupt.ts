import { readFile } from 'node:fs/promises';
import { JobBoot, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { executingJobs, interruptJob } from './job-records.js';

/** The kernel's id of this boot; changes exactly when the host reboots. */
export async function currentBootId(file = '/proc/sys/kernel/random/boot_id'): Promise<string> {
  return (await readFile(file, 'utf8').catch(() => '')).trim();
}

/**
 * A host reboot interrupts the jobs that were running on it (§4.2 rule 4: they become
 * retryable); a nodeagent that merely restarted under the same boot resumes them instead.
 * Called once at start, before the executor picks jobs up. Returns the ids it interrupted.
 */
export async function interruptJobsAfterReboot(opts: {
  store: Store;
  journal: EventJournal;
  node: string;
  bootId: string;
}): Promise<number[]> {
  const { store, journal, node, bootId } = opts;
  if (!bootId) return [];
  const last = (await store.get(keys.jobBoot(node), JobBoot))?.value.boot_id;
  const interrupted: number[] = [];
  if (last && last !== bootId) {
    for (const job of await executingJobs(store, node))
      if (await interruptJob(store, journal, job, `a reboot of node ${node}`)) interrupted.push(job.id);
  }
  if (last !== bootId) await store.put(keys.jobBoot(node), { boot_id: bootId });
  return interrupted;
}
