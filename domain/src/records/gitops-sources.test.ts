import { describe, expect, it } from 'vitest';
import { isoNow, keys } from '@vtl/api';
import { z } from 'zod';
import type { Txn } from '@vtl/store';
import { useTestStore } from '@vtl/store/testing/use-test-store';
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
  const t = useTestStore();

  const status = (name: string) => t.store.get(keys.gitopsSourceStatus.one(name), Status);
  const listed = async (name: string) => (await t.store.get(keys.gitopsSources.one(name), Source))!;
  const applied = over({ outcome: 'applied', message: 'Applied.' });

  it('records the outcome over the status, also of a source changed during the poll', async () => {
    expect(await createGitSource(t.store, source('edited'), noSecret)).toBe(true);
    expect(await createGitSource(t.store, source('edited'), noSecret)).toBe(false);
    const polled = await listed('edited');
    await updateGitSource(t.store, 'edited', Source, (s) => ({ ...s, branch: 'release' }));
    expect((await listed('edited')).value.branch).toBe('release');
    expect(await recordPollOutcome(t.store, polled, Status, applied)).toBe(true);
    expect((await status('edited'))?.value).toMatchObject({ outcome: 'applied', applied_revision: '' });
    expect(await recordPollOutcome(t.store, polled, Status, over({ applied_revision: 'abc' }))).toBe(true);
    expect((await status('edited'))?.value).toMatchObject({ outcome: 'applied', applied_revision: 'abc' });
  });

  it('a source deleted during its poll gets no status back', async () => {
    await createGitSource(t.store, source('gone'), noSecret);
    const polled = await listed('gone');
    expect(await recordPollOutcome(t.store, polled, Status, applied)).toBe(true);
    // The poller fetched and applied; the source was deleted meanwhile, with its status.
    expect(await deleteGitSource(t.store, 'gone', noSecret)).toBe(true);
    expect(await status('gone')).toBeUndefined();
    expect(await recordPollOutcome(t.store, polled, Status, applied)).toBe(false);
    expect(await status('gone')).toBeUndefined();
    expect(await deleteGitSource(t.store, 'gone', noSecret)).toBe(false);
  });

  it('nor does a source made again under its name: that poll fetched the old one', async () => {
    await createGitSource(t.store, source('again'), noSecret);
    const polled = await listed('again');
    await deleteGitSource(t.store, 'again', noSecret);
    await createGitSource(t.store, source('again'), noSecret);
    expect(await recordPollOutcome(t.store, polled, Status, applied)).toBe(false);
    expect(await status('again')).toBeUndefined();
    expect(await recordPollOutcome(t.store, await listed('again'), Status, applied)).toBe(true);
  });

  it('a poll request is written only for a source that exists, and goes with it', async () => {
    const poll = (name: string) => t.store.get(keys.gitopsPollRequests.one(name), PollRequest);
    expect(await requestPoll(t.store, 'nosuch')).toBe(false);
    expect(await poll('nosuch')).toBeUndefined();
    await createGitSource(t.store, source('hooked'), noSecret);
    expect(await requestPoll(t.store, 'hooked')).toBe(true);
    const taken = (await poll('hooked'))!;
    // A newer request arrives while the poller takes the one it saw: the newer one stays.
    expect(await requestPoll(t.store, 'hooked')).toBe(true);
    expect(await takePollRequest(t.store, 'hooked', taken.modRevision)).toBe(false);
    const newer = (await poll('hooked'))!;
    expect(await takePollRequest(t.store, 'hooked', newer.modRevision)).toBe(true);
    expect(await poll('hooked')).toBeUndefined();
    await requestPoll(t.store, 'hooked');
    await deleteGitSource(t.store, 'hooked', noSecret);
    expect(await poll('hooked')).toBeUndefined();
  });
});
