import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './appliance.js';
import { ensureGuestImage, type GuestImage } from '../guest/guest-image.js';
import type { GuestRun } from '../guest/qemu-runner.js';

/** The set-up every guest test shares: the appliance, the guest image and what is appended to it. */
export interface GuestBench {
  app: Appliance;
  image: GuestImage;
  /** cpio archives appended to the initramfs (overlays), in the order given. */
  overlays: Buffer[];
}

/**
 * Starts the appliance while the guest image (and overlays built from it) are made, in
 * parallel: the slow parts of a guest test. A started appliance is handed to `keep` even when
 * the image failed, so the caller's afterAll can destroy it.
 */
export async function startGuestBench(opts: {
  env?: Record<string, string>;
  overlays?: ((image: GuestImage) => Promise<Buffer>)[];
  keep: (app: Appliance) => void;
}): Promise<GuestBench> {
  const [built, started] = await Promise.allSettled([
    ensureGuestImage().then(async (image) => ({
      image,
      overlays: await Promise.all((opts.overlays ?? []).map((make) => make(image))),
    })),
    Appliance.start({ env: opts.env ?? {} }),
  ]);
  if (started.status === 'fulfilled') opts.keep(started.value);
  if (built.status === 'rejected') throw built.reason;
  if (started.status === 'rejected') throw started.reason;
  return { app: started.value, ...built.value };
}

export interface GuestCartridge {
  label: string;
  location: string;
  library: number;
}

export interface GuestLibrary {
  id: number;
  /** Its cartridges once minted, all in storage slots. */
  before: GuestCartridge[];
  /** Drive serials by index, as the status view names them (the guest finds devices by them). */
  driveSerials: string[];
}

/** A library made, applied and filled with cartridges through the API, as an admin would. */
export async function createGuestLibrary(
  app: Appliance,
  spec: { name: string; labelPrefix: string; drives: number; slots: number; cartridges: number },
): Promise<GuestLibrary> {
  const pool = await freePool(app, spec.name);
  const lib = await app.api.post('/api/libraries', {
    name: spec.name,
    product: '3573-TL',
    drive_product: 'ULT3580-TD8',
    num_drives: spec.drives,
    num_slots: spec.slots,
    num_map: 1,
    label_prefix: spec.labelPrefix,
    pool_id: pool.id,
  });
  expect(lib.status, lib.text).toBe(201);
  const id = lib.body.library as number;
  const applied = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
  expect(applied.status, applied.text).toBe(200);
  const minted = await app.api.post('/api/cartridges', { library: id, count: spec.cartridges });
  expect(minted.status, minted.text).toBe(200);
  const inSlots = async () =>
    (await libraryCartridges(app, id)).filter((c) => c.location.startsWith('slot:'));
  await waitFor(async () => (await inSlots()).length === spec.cartridges);
  const drives = await waitFor(async () => {
    const status = (await app.api.get('/api/status')).body;
    const d = status.libraries.find((l: { library: { id: number } }) => l.library.id === id)?.drives as
      { serial: string }[] | undefined;
    return d?.length === spec.drives && d.every((x) => x.serial) ? d : undefined;
  });
  return { id, before: await libraryCartridges(app, id), driveSerials: drives.map((d) => d.serial) };
}

/** A pool that homes no library yet (one library per pool): the default one, else a new one. */
async function freePool(app: Appliance, name: string): Promise<{ id: number }> {
  type Pool = { id: number; library: number | null; state: string };
  const free = async () =>
    ((await app.api.get('/api/pools')).body as Pool[]).find(
      (p) => p.library === null && p.state === 'active',
    );
  const found = await free();
  if (found) return found;
  const dir = path.join(app.stateDir, 'pools', name);
  await fs.mkdir(dir, { recursive: true });
  const made = await app.api.post('/api/pools', { name: `${name}-pool`, path: dir });
  expect(made.status, made.text).toBe(201);
  return waitFor(free);
}

export async function libraryCartridges(app: Appliance, library: number): Promise<GuestCartridge[]> {
  const all = (await app.api.get('/api/cartridges')).body as GuestCartridge[];
  return all.filter((c) => c.library === library);
}

/** `slot=label,...` of the cartridges in storage slots, as the guest's slot_tags prints mtx status. */
export const slotTags = (carts: readonly GuestCartridge[]) =>
  carts
    .filter((c) => c.location.startsWith('slot:'))
    .map((c) => [Number(c.location.slice(5)), c.label] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([slot, label]) => `${slot}=${label}`)
    .join(',');

/**
 * The checker of a guest run's steps: `passed(step)` returns the detail of a step the guest
 * reported ok, else fails with that step's LOG lines (and those of `alsoLog` prefixes).
 */
export function stepChecker(run: () => GuestRun, alsoLog: string[] = []): (step: string) => string {
  return (step) => {
    const guest = run();
    const result =
      guest.results.find((r) => r.step === step && !r.ok) ?? guest.results.find((r) => r.step === step);
    const prefixes = [step, ...alsoLog].map((p) => `LOG ${p} `);
    const logs = guest.console
      .split(/\r?\n/)
      .filter((l) => prefixes.some((p) => l.startsWith(p)))
      .join('\n');
    const context = `${step}: ${result ? result.detail : 'never reported'}\n${logs || guest.console.slice(-3000)}`;
    expect(result?.ok, context).toBe(true);
    return result!.detail;
  };
}
