import { cp, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { VtlError } from '@vtl/api';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../emulator.js';
import { makeTempDir } from '../util/temp-dir.js';
import { EmulatorClient } from './client.js';
import type { EmulatorConfig } from './protocol.js';

const silent = pino({ level: 'silent' });
let tmp: { path: string; cleanup: () => Promise<void> };
let emu: RunningEmulator;
let client: EmulatorClient;

const config = (): EmulatorConfig => ({
  node: 'node-1',
  generation: 1,
  socket: join(tmp.path, 'run', 'emulator.sock'),
  iscsi: { bind: '127.0.0.1', port: 0, open: true, allowed_initiators: [] },
  libraries: [
    {
      id: 1,
      name: 'lib',
      serial: 'LIBSER001',
      product: '3573-TL',
      vendor: 'IBM',
      drive_product: 'ULT3580-HH8',
      drive_serials: ['1000000001'],
      num_slots: 5,
      num_ie: 2,
      media_dir: join(tmp.path, 'pool1'),
      generation: 8,
    },
  ],
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof VtlError ? `${e.code}: ${e.message}` : String(e)),
  );

beforeEach(async () => {
  tmp = await makeTempDir();
  emu = await startEmulator(config(), silent);
  client = await EmulatorClient.connect(config().socket, { retryIntervalMs: 20 });
  await client.mint({ library: 1, label: 'OFF001L8', slot: 1 });
  await client.mint({ library: 1, label: 'OFF002L8', slot: 2 });
});
afterEach(async () => {
  await client.close();
  await emu.stop();
  await tmp.cleanup();
});

const cart = async (label: string) =>
  (await client.status()).libraries[0]!.cartridges.find((c) => c.label === label)!;

describe('control methods of offsite jobs', () => {
  it('holds a cartridge out of the drives until released; a loaded one cannot be held', async () => {
    await client.hold({ library: 1, label: 'OFF001L8', holder: 'export job 1' });
    expect(await refusal(client.load({ library: 1, drive: 0, label: 'OFF001L8' }))).toMatch(
      /held by export job 1/,
    );
    await client.release({ library: 1, label: 'OFF001L8' });
    expect(await refusal(client.load({ library: 1, drive: 0, label: 'OFF001L8' }))).toBe('ok');
    expect(await refusal(client.hold({ library: 1, label: 'OFF001L8', holder: 'x' }))).toMatch(
      /loaded in drive 0/,
    );
    expect(await refusal(client.evict({ library: 1, label: 'OFF001L8' }))).toMatch(/loaded in drive 0/);
    expect((await cart('OFF001L8')).stub).toBe(false);
  });

  it('evicts to a labelled stub and swaps a staged image back in byte-identical', async () => {
    const media = config().libraries[0]!.media_dir;
    const original = join(media, 'OFF002L8');
    const staging = join(media, '.import-OFF002L8-1');
    await cp(original, staging, { recursive: true });
    const before = await readFile(join(original, 'meta.json'), 'utf8');

    await client.evict({ library: 1, label: 'OFF002L8' });
    expect(await cart('OFF002L8')).toMatchObject({ stub: true, location: 'slot:2' });
    await expect(stat(join(original, 'data'))).rejects.toThrow();

    expect(
      await refusal(client.swapIn({ library: 1, label: 'OFF002L8', staging: join(tmp.path, 'elsewhere') })),
    ).toMatch(/hidden directory/);
    await client.swapIn({ library: 1, label: 'OFF002L8', staging });
    expect(await cart('OFF002L8')).toMatchObject({ stub: false, location: 'slot:2' });
    expect(await readFile(join(original, 'meta.json'), 'utf8')).toBe(before);
    await expect(stat(staging)).rejects.toThrow();
    expect(await refusal(client.load({ library: 1, drive: 0, label: 'OFF002L8' }))).toBe('ok');
  });
});

describe('import into a library', () => {
  it('places a staged cartridge from elsewhere in the first empty I/E slot', async () => {
    const media = config().libraries[0]!.media_dir;
    // A cartridge of another library, staged as an import would unpack it.
    await client.mint({ library: 1, label: 'NEW001L8', slot: 3 });
    const staging = join(media, '.import-NEW001L8-9');
    await cp(join(media, 'NEW001L8'), staging, { recursive: true });
    await client.remove({ library: 1, label: 'NEW001L8' });

    expect(await client.placeInIe({ library: 1, label: 'NEW001L8', staging })).toEqual({ location: 'ie:1' });
    expect(await cart('NEW001L8')).toMatchObject({ stub: false, location: 'ie:1' });
    // Idempotent: a retry finds it placed.
    expect(await client.placeInIe({ library: 1, label: 'NEW001L8', staging })).toEqual({ location: 'ie:1' });
    expect(await refusal(client.placeInIe({ library: 1, label: 'NEW002L6', staging }))).toMatch(
      /LTO-8 drives/,
    );
    expect(await refusal(client.load({ library: 1, drive: 0, label: 'NEW001L8' }))).toBe('ok');
  });
});

describe('after an I/E-slot export', () => {
  it('returns a cartridge from the I/E slot to its home slot, or the first empty one', async () => {
    const media = config().libraries[0]!.media_dir;
    await client.mint({ library: 1, label: 'IEX001L8', slot: 3 });
    const staging = join(media, '.import-IEX001L8-1');
    await cp(join(media, 'IEX001L8'), staging, { recursive: true });
    await client.remove({ library: 1, label: 'IEX001L8' });
    await client.placeInIe({ library: 1, label: 'IEX001L8', staging });
    await client.mint({ library: 1, label: 'IEX002L8', slot: 3 });
    // Home slot 3 is taken now: the first empty storage slot it is.
    expect(await client.returnToSlot({ library: 1, label: 'IEX001L8', slot: 3 })).toEqual({ slot: 4 });
    expect(await cart('IEX001L8')).toMatchObject({ location: 'slot:4' });
    expect(await client.returnToSlot({ library: 1, label: 'IEX001L8', slot: 3 })).toEqual({ slot: 4 });
    expect(await refusal(client.returnToSlot({ library: 1, label: 'NOPE01L8', slot: 3 }))).toMatch(
      /not in library/,
    );
  });
});
