import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { Job, LibrarySpec, isoNow, keys } from '@vtl/api';
import { EventJournal, waitFor } from '@vtl/store';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';
import { startJobExecutor } from './job-executor.js';
import { exportJob } from './testing/jobs.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const library = LibrarySpec.parse({
  id: 1,
  name: 'lib-1',
  vendor: 'IBM',
  product: '3573-TL',
  variant: '',
  serial: 'JX1',
  drive_model: 'ULT3580-TD8',
  drive_serials: ['D1'],
  num_drives: 1,
  num_slots: 5,
  num_ie: 1,
  label_prefix: 'JX',
  media_dir: '/unused',
  home_pool: 1,
  created_at: isoNow(),
});

/** Longer than the nodeagent's whole shutdown budget (main.ts). */
const SLOW_UNWIND_MS = 4_000;

describe('the job executor on a control-plane restart', () => {
  const t = useTestStore();
  beforeAll(async () => {
    await t.store.put(keys.libraries.one(1), library);
  });

  it('records running jobs interrupted at once, though their steps take longer to unwind than shutdown may', async () => {
    await t.store.put(keys.jobs.one(1), exportJob(1));
    const events: string[] = [];
    let entered = false;
    const released: string[] = [];
    const executor = await startJobExecutor({
      store: t.store,
      journal: new EventJournal(t.store),
      node: 'n1',
      supervisor: {
        emulator: { release: async ({ label }: { label: string }) => void released.push(label) },
      } as unknown as EmulatorSupervisor,
      publisher: {} as NodeStatusPublisher,
      logger: pino({ level: 'silent' }),
      steps: {
        // An upload that, once aborted, still takes seconds to return (a chunk being compressed).
        uploading: async ({ signal }) => {
          entered = true;
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          await new Promise((resolve) => setTimeout(resolve, SLOW_UNWIND_MS));
          events.push('step returned');
        },
      },
    });
    await waitFor(async () => entered, { timeoutMs: 10_000 });

    const started = Date.now();
    const stopped = executor
      .stop({ interrupt: 'a control-plane restart' })
      .then(() => events.push('stopped'));
    await waitFor(async () => (await t.store.get(keys.jobs.one(1), Job))?.value.state === 'interrupted', {
      timeoutMs: 2_000,
      intervalMs: 50,
    });
    expect(Date.now() - started).toBeLessThan(SLOW_UNWIND_MS);
    const record = (await t.store.get(keys.jobs.one(1), Job))!.value;
    expect(record.error).toMatch(
      /interrupted by a control-plane restart; retry with POST \/api\/jobs\/1\/retry/,
    );
    // The cartridge is let go only once the step stopped reading it.
    expect(released).toEqual([]);
    await stopped;
    expect(events).toEqual(['step returned', 'stopped']);
    expect(released).toEqual(['JXE001L8']);
  }, 20_000);
});
