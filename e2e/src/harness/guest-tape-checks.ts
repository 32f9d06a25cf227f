import { expect } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { slotTags, type GuestCartridge } from './guest-session.js';

/**
 * What a guest run's tape steps (e2e/src/guest/guest-steps.sh) must show whatever fabric carries
 * the commands: the same tools must see the same library over iSCSI (linux-guest.test.ts) and
 * through LIO/TCMU (fc-tcmu-guest.test.ts). Each check fails with the guest's log of the step.
 */
export interface GuestTapeRun {
  /** The detail of a step the guest reported ok (stepChecker). */
  passed: (step: string) => string;
  /** The library's cartridges before the guest ran, and now. */
  before: readonly GuestCartridge[];
  cartridges: () => Promise<GuestCartridge[]>;
  driveSerial: string;
  loadSlot: number;
  fromSlot: number;
  toSlot: number;
}

const labelIn = (run: GuestTapeRun, slot: number) =>
  run.before.find((c) => c.location === `slot:${slot}`)!.label;

/** mtx status lists the barcodes the API lists; mtx load puts one in drive 0, mt-st sees BOT. */
export function expectLoaded(run: GuestTapeRun): void {
  expect(run.passed('mtx-status')).toBe(slotTags(run.before));
  expect(run.passed('mtx-load')).toBe(`drive0=${labelIn(run, run.loadSlot)} source=${run.loadSlot}`);
  expect(run.passed('mt-status')).toMatch(/BOT/);
}

/** Three tar archives, each some 10 KiB records followed by its filemark, and mt-st positions. */
export function expectTarArchivesWritten(run: GuestTapeRun): void {
  const written = /^starts=(\d+),(\d+),(\d+) end=(\d+)$/.exec(run.passed('write'));
  expect(written).not.toBeNull();
  const [start1, start2, start3, end] = written!.slice(1).map(Number) as [number, number, number, number];
  expect(start1).toBe(0);
  expect(start2).toBeGreaterThan(start1 + 1);
  expect(start3).toBeGreaterThan(start2 + 1);
  expect(end).toBeGreaterThan(start3 + 1);
  for (const step of ['rewind', 'fsf', 'bsf', 'eod', 'seek']) run.passed(step);
}

/** Every archive read back byte-exactly, found by seeking, by filemarks and from the start. */
export function expectTarArchivesReadBack(run: GuestTapeRun): void {
  expect(run.passed('read-seek')).toBe('set3 matches');
  expect(run.passed('read-fsf')).toBe('set2 matches');
  expect(run.passed('read-all')).toBe('set1 set2 set3');
}

/** tapeinfo, loaderinfo, sg_modes, sg_logs, sg_opcodes and mtx inventory. */
export function expectInspectionTools(run: GuestTapeRun): void {
  expect(run.passed('tapeinfo')).toBe(
    `Product ID=ULT3580-TD8 SerialNumber=${run.driveSerial} MaxBlock=8388608 Ready=yes BOP=yes`,
  );
  expect(run.passed('loaderinfo')).toBe('Medium Transport=1 Storage=8 Import/Export=1 Data Transfer=2');
  run.passed('inspect');
}

/** sg_persist registers a key, reserves the drive (Exclusive Access) and gives it back. */
export function expectPersistentReservation(run: GuestTapeRun): void {
  expect(run.passed('persistent-reserve')).toBe(
    'keys=0x5a17e1 held=0x5a17e1 Exclusive Access rewound-to=0 keys-after=0',
  );
}

/**
 * mt offline, mtx unload and transfer: the API sees the loaded cartridge home again and the
 * moved one in its new slot, and mtx status agrees. Returns the two labels.
 */
export async function expectUnloadedAndMoved(run: GuestTapeRun): Promise<{ loaded: string; moved: string }> {
  run.passed('offline');
  run.passed('mtx-unload');
  run.passed('mtx-transfer');
  const loaded = labelIn(run, run.loadSlot);
  const moved = labelIn(run, run.fromSlot);
  await waitFor(async () => {
    const now = await run.cartridges();
    return (
      now.find((c) => c.label === loaded)?.location === `slot:${run.loadSlot}` &&
      now.find((c) => c.label === moved)?.location === `slot:${run.toSlot}`
    );
  });
  expect(run.passed('mtx-status-after')).toBe(slotTags(await run.cartridges()));
  return { loaded, moved };
}
