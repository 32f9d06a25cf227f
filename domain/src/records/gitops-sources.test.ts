import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoNow, keys } from '@vtl/api';
import { z } from 'zod';
import type { Store, Txn } from '@vtl/store';
import { startTestStores, type TestStores } from '@vtl/store/testing';
import {
  createGitSource,
  deleteGitSource,
  recordPollOutcome,
  requestPoll,
  takePollRequest,
  updateGitSource,
} from './gitops-sources.js';

const source = (name: string) => ({
  name,
  url: `git://127.0.0.1/${name}.git`,
  branch: 'main',
  path: '.',
  interval_sec: 60,
  prune: false,
  suspended: false,
  credential: 'none',
  created_at: isoNow(),
});
const noSecret = (_txn: Txn) => undefined;
/** Stand-ins for the GitOps model's schemas (@vtl/gitops GitSourceRecord, SourceStatus). */
const Source = z.looseObject({ name: z.string(), branch: z.string() });
const Status = z.looseObject({ outcome: z.string(), applied_revision: z.string() });
type Status = z.infer<typeof Status>;
const PollRequest = z.object({ requested_at: z.string() });
const over =
  (patch: Partial<Status>) =>
  (cur: Status | undefined): Status => ({ outcome: 'never', applied_revision: '', ...cur, ...patch });

describe('Git source records (spec, poll outcome, poll requests)', () => {
  let t: TestStores;
  let store: Store;
  beforeAll(async () => {
    t = await startTestStores();
    store = t.stores[0]!;
  });
  afterAll(async () => {
    await t?.stop();
  });

  const status = (name: string) => store.get(keys.gitopsSourceStatus.one(name), Status);
  const listed = async (name: string) => (await store.get(keys.gitopsSources.one(name), Source))!;
  const applied = over({ outcome: 'applied', message: 'Applied.' });

  it('records the outcome over the status, also of a source changed during the poll', async () => {
    expect(await createGitSource(store, source('edited'), noSecret)).toBe(true);
    expect(await createGitSource(store, source('edited'), noSecret)).toBe(false);
    const polled = await listed('edited');
    await updateGitSource(store, 'edited', Source, (s) => ({ ...s, branch: 'release' }));
    expect((await listed('edited')).value.branch).toBe('release');
    expect(await recordPollOutcome(store, polled, Status, applied)).toBe(true);
    expect((await status('edited'))?.value).toMatchObject({ outcome: 'applied', applied_revision: '' });
    expect(await recordPollOutcome(store, polled, Status, over({ applied_revision: 'abc' }))).toBe(true);
    expect((await status('edited'))?.value).toMatchObject({ outcome: 'applied', applied_revision: 'abc' });
  });

  it('a source deleted during its poll gets no status back', async () => {
    await createGitSource(store, source('gone'), noSecret);
    const polled = await listed('gone');
    expect(await recordPollOutcome(store, polled, Status, applied)).toBe(true);
    // The poller fetched and applied; the source was deleted meanwhile, with its status.
    expect(await deleteGitSource(store, 'gone', noSecret)).toBe(true);
    expect(await status('gone')).toBeUndefined();
    expect(await recordPollOutcome(store, polled, Status, applied)).toBe(false);
    expect(await status('gone')).toBeUndefined();
    expect(await deleteGitSource(store, 'gone', noSecret)).toBe(false);
  });

  it('nor does a source made again under its name: that poll fetched the old one', async () => {
    await createGitSource(store, source('again'), noSecret);
    const polled = await listed('again');
    await deleteGitSource(store, 'again', noSecret);
    await createGitSource(store, source('again'), noSecret);
    expect(await recordPollOutcome(store, polled, Status, applied)).toBe(false);
    expect(await status('again')).toBeUndefined();
    expect(await recordPollOutcome(store, await listed('again'), Status, applied)).toBe(true);
  });

  it('a poll request is written only for a source that exists, and goes with it', async () => {
    const poll = (name: string) => store.get(keys.gitopsPollRequests.one(name), PollRequest);
    expect(await requestPoll(store, 'nosuch')).toBe(false);
    expect(await poll('nosuch')).toBeUndefined();
    await createGitSource(store, source('hooked'), noSecret);
    expect(await requestPoll(store, 'hooked')).toBe(true);
    const taken = (await poll('hooked'))!;
    // A newer request arrives while the poller takes the one it saw: the newer one stays.
    expect(await requestPoll(store, 'hooked')).toBe(true);
    expect(await takePollRequest(store, 'hooked', taken.modRevision)).toBe(false);
    const newer = (await poll('hooked'))!;
    expect(await takePollRequest(store, 'hooked', newer.modRevision)).toBe(true);
    expect(await poll('hooked')).toBeUndefined();
    await requestPoll(store, 'hooked');
    await deleteGitSource(store, 'hooked', noSecret);
    expect(await poll('hooked')).toBeUndefined();
  });
});
