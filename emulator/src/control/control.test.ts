import { appendFile, readdir, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { VtlError } from '@vtl/api';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../emulator.js';
import { makeTempDir } from '../util/temp-dir.js';
import { cartridgeDir, partitionFiles, readMeta } from '../media/layout.js';
import { EmulatorClient } from './client.js';
import type { EmuEvent, EmulatorConfig } from './protocol.js';

const silent = pino({ level: 'silent' });
let tmp: { path: string; cleanup: () => Promise<void> };
let running: RunningEmulator[];
let clients: EmulatorClient[];
let clock: number;

beforeEach(async () => {
  tmp = await makeTempDir();
  running = [];
  clients = [];
  clock = Date.parse('2025-01-01T00:00:00Z');
});
afterEach(async () => {
  for (const c of clients) await c.close();
  for (const r of running) await r.stop();
  await tmp.cleanup();
});

function config(): EmulatorConfig {
  return {
    node: 'node-1',
    generation: 7,
    socket: join(tmp.path, 'run', 'emulator.sock'),
    iscsi: { bind: '127.0.0.1', port: 0, open: true, allowed_initiators: [] },
    libraries: [
      {
        id: 1,
        name: 'lib one',
        serial: 'LIBSER001',
        product: '3573-TL',
        vendor: 'IBM',
        drive_product: 'ULT3580-HH8',
        drive_serials: ['1000000001', '1000000002'],
        num_slots: 5,
        num_ie: 2,
        media_dir: join(tmp.path, 'pool1'),
        generation: 8,
      },
    ],
  };
}

async function start(): Promise<RunningEmulator> {
  const emu = await startEmulator(config(), silent, { now: () => clock });
  running.push(emu);
  return emu;
}

async function connect(): Promise<EmulatorClient> {
  const c = await EmulatorClient.connect(config().socket, { retryIntervalMs: 20 });
  clients.push(c);
  return c;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof VtlError ? e.code : String(e)),
  );

async function until<T>(probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('control socket', () => {
  it('says hello and reports libraries with drives, slots and cartridges', async () => {
    await start();
    const c = await connect();
    const hello = await c.hello();
    expect(hello).toMatchObject({ pid: process.pid, generation: 7, iscsi_portal: '' });
    expect(hello.started_at).toMatch(/Z$/);

    await c.mint({ library: 1, label: 'AAA001L8', slot: 2 });
    const { libraries } = await c.status();
    expect(libraries).toHaveLength(1);
    const lib = libraries[0]!;
    expect(lib).toMatchObject({ id: 1, serial: 'LIBSER001' });
    expect(lib.changer).toContain('lun0');
    expect(lib.drives.map((d) => [d.index, d.queue_id, d.serial, d.product, d.loaded])).toEqual([
      [0, 101, '1000000001', 'ULT3580-HH8', ''],
      [1, 102, '1000000002', 'ULT3580-HH8', ''],
    ]);
    expect(lib.slots).toHaveLength(7);
    expect(lib.slots[1]).toEqual({ kind: 'storage', num: 2, label: 'AAA001L8' });
    expect(lib.slots[5]).toEqual({ kind: 'ie', num: 1, label: '' });
    expect(lib.cartridges).toEqual([
      expect.objectContaining({
        label: 'AAA001L8',
        size_bytes: 80,
        stub: false,
        location: 'slot:2',
        capacity_bytes: 12_000_000_000_000, // LTO-8's, from the image's meta.json
      }),
    ]);
  });

  it('mints idempotently and refuses what the spec refuses, with stable codes', async () => {
    await start();
    const c = await connect();
    expect(await c.mint({ library: 1, label: 'aaa001l8', slot: 1 })).toEqual({ label: 'AAA001L8', slot: 1 });
    expect(await c.mint({ library: 1, label: 'AAA001L8', slot: 1 })).toEqual({ label: 'AAA001L8', slot: 1 });
    expect(await c.mint({ library: 1, label: 'AAA002L7', slot: 0 })).toEqual({ label: 'AAA002L7', slot: 2 });
    expect(await codeOf(c.mint({ library: 1, label: 'AAA003L8', slot: 1 }))).toBe('bad_request');
    expect(await codeOf(c.mint({ library: 1, label: 'AAA001L8', slot: 3 }))).toBe('bad_request');
    expect(await codeOf(c.mint({ library: 1, label: 'AAA004L5', slot: 3 }))).toBe('bad_request');
    expect(await codeOf(c.mint({ library: 1, label: 'BAD', slot: 3 }))).toBe('bad_request');
    expect(await codeOf(c.mint({ library: 1, label: 'AAA005L8', slot: 9 }))).toBe('bad_request');
    expect(await codeOf(c.mint({ library: 9, label: 'AAA005L8', slot: 3 }))).toBe('not_found');
    const err = await c.mint({ library: 1, label: 'AAA003L8', slot: 1 }).catch((e: VtlError) => e);
    expect(err).toBeInstanceOf(VtlError);
    expect((err as VtlError).message).toMatch(/slot 1 of library 1 holds AAA001L8/);
  });

  it('mints a batch in one call: each item answered on its own, images durable and in place', async () => {
    await start();
    const c = await connect();
    await c.mint({ library: 1, label: 'AAA001L8', slot: 1 });
    await c.load({ library: 1, drive: 0, label: 'AAA001L8' });
    const { results } = await c.mintBatch({
      library: 1,
      items: [
        { label: 'aaa002l8', slot: 2 },
        { label: 'AAA003L8', slot: 1 }, // the home slot of the loaded AAA001L8
        { label: 'AAA004L5', slot: 3 }, // LTO-8 drives cannot write L5
        { label: 'AAA005L8', slot: 4 },
        { label: 'AAA002L8', slot: 2 },
      ],
    });
    expect(
      results.map((r) => ('error' in r ? `${r.label} ${r.error.code}` : `${r.label}@${r.slot}`)),
    ).toEqual(['AAA002L8@2', 'AAA003L8 bad_request', 'AAA004L5 bad_request', 'AAA005L8@4', 'AAA002L8@2']);
    const lib = (await c.status()).libraries[0]!;
    expect(lib.slots.filter((s) => s.kind === 'storage').map((s) => s.label)).toEqual([
      '',
      'AAA002L8',
      '',
      'AAA005L8',
      '',
    ]);
    // Each image carries its VOL1 label: the host sees written bytes.
    expect(lib.cartridges.find((x) => x.label === 'AAA005L8')?.size_bytes).toBeGreaterThan(0);
    expect((await readdir(config().libraries[0]!.media_dir)).filter((n) => n.startsWith('.mint-'))).toEqual(
      [],
    );
  });

  it('mints a WORM-labelled cartridge of a batch write-once, as a single mint does', async () => {
    await start();
    const c = await connect();
    const { results } = await c.mintBatch({
      library: 1,
      items: [
        { label: 'AAA001LY', slot: 1 },
        { label: 'AAA002L8', slot: 2 },
      ],
    });
    expect(results.every((r) => !('error' in r))).toBe(true);
    const mediaDir = config().libraries[0]!.media_dir;
    expect((await readMeta(cartridgeDir(mediaDir, 'AAA001LY'))).worm).toBe(true);
    expect((await readMeta(cartridgeDir(mediaDir, 'AAA002L8'))).worm).toBeUndefined();
  });

  it('loads and unloads under the quiet window and pushes events to every client', async () => {
    await start();
    const c = await connect();
    const watcher = await connect();
    const seen: EmuEvent[] = [];
    watcher.on('event', (e) => seen.push(e));
    await c.mint({ library: 1, label: 'AAA001L8', slot: 3 });
    expect(await c.load({ library: 1, drive: 1, label: 'AAA001L8' })).toEqual({
      detail: 'slot 3 -> drive 1',
    });
    expect(await codeOf(c.load({ library: 1, drive: 1, label: 'AAA001L8' }))).toBe('bad_request');
    expect(await codeOf(c.unload({ library: 1, drive: 1 }))).toBe('bad_request');
    expect(await codeOf(c.remove({ library: 1, label: 'AAA001L8' }))).toBe('bad_request');
    const status = await c.status();
    expect(status.libraries[0]!.drives[1]).toMatchObject({
      loaded: 'AAA001L8',
      source_slot: 3,
      activity: 'idle',
    });
    expect(status.libraries[0]!.cartridges[0]).toMatchObject({ location: 'drive:1' });

    clock += 15_000;
    expect(await c.unload({ library: 1, drive: 1 })).toEqual({ detail: 'drive 1 -> slot 3', slot: 3 });
    // Library delete pulls media whatever the drive was doing a moment ago.
    await c.load({ library: 1, drive: 0, label: 'AAA001L8' });
    expect(await codeOf(c.unload({ library: 1, drive: 0 }))).toBe('bad_request');
    expect(await c.unload({ library: 1, drive: 0, force: true })).toEqual({
      detail: 'drive 0 -> slot 3',
      slot: 3,
    });
    await until(() => (seen.filter((e) => e.kind === 'manual_unload').length === 2 ? true : undefined));
    expect(seen.map((e) => `${e.kind} ${e.subject} ${e.detail}`)).toEqual([
      'drive_activity drive:1:1 mounting',
      'manual_load AAA001L8 slot 3 -> drive 1',
      'drive_activity drive:1:1 idle',
      'manual_unload AAA001L8 drive 1 -> slot 3',
      'drive_activity drive:1:0 mounting',
      'manual_load AAA001L8 slot 3 -> drive 0',
      'drive_activity drive:1:0 idle',
      'manual_unload AAA001L8 drive 0 -> slot 3',
    ]);
    expect(await c.remove({ library: 1, label: 'AAA001L8' })).toEqual({});
    expect(await c.remove({ library: 1, label: 'AAA001L8' })).toEqual({});
    expect((await c.status()).libraries[0]!.cartridges).toEqual([]);
  });

  it('answers malformed and unknown requests with an error, keeping the connection', async () => {
    await start();
    const socket = createConnection(config().socket);
    const lines: string[] = [];
    socket.on('data', (d) => lines.push(...d.toString().split('\n').filter(Boolean)));
    socket.write('not json\n{"id":7,"method":"frobnicate"}\n{"id":8,"method":"hello"}\n');
    await until(() => (lines.length >= 3 ? true : undefined));
    socket.destroy();
    const replies = lines.map((l) => JSON.parse(l));
    expect(replies[0]).toMatchObject({ id: 0, ok: false, error: { code: 'bad_request' } });
    expect(replies[1]).toMatchObject({ id: 7, ok: false, error: { code: 'bad_request' } });
    expect(replies[2]).toMatchObject({ id: 8, ok: true });
  });

  it('replaces a stale socket file, refuses to start beside a live emulator, and shuts down on request', async () => {
    const cfg = config();
    await start();
    await expect(startEmulator(cfg, silent)).rejects.toMatchObject({ code: 'conflict' });
    const c = await connect();
    expect(await c.shutdown()).toEqual({});
    await running[0]!.stopped;
    await writeFile(cfg.socket, 'stale');
    await start();
    expect((await (await connect()).hello()).generation).toBe(7);
  });

  it('answers a status asked since its tag as unchanged until something it shows changes', async () => {
    const first = await start();
    const c = await connect();
    await c.mint({ library: 1, label: 'AAA001L8', slot: 3 });
    const minted = await c.status();
    expect(minted.tag).toEqual(expect.any(String));
    expect(minted.unchanged).toBeUndefined();
    // Nothing changed: no libraries sent again, the same tag.
    expect(await c.status({ since: minted.tag! })).toMatchObject({
      libraries: [],
      unchanged: true,
      tag: minted.tag,
    });
    expect(await c.status()).toEqual(minted);

    // A load moves the cartridge and sets the drive: a new tag with the new status.
    await c.load({ library: 1, drive: 1, label: 'AAA001L8' });
    const loaded = await c.status({ since: minted.tag! });
    expect(loaded.unchanged).toBeUndefined();
    expect(loaded.tag).not.toBe(minted.tag);
    expect(loaded.libraries[0]!.drives[1]!.loaded).toBe('AAA001L8');
    expect(loaded.libraries[0]!.cartridges[0]).toMatchObject({ label: 'AAA001L8', location: 'drive:1' });
    expect((await c.status({ since: loaded.tag! })).unchanged).toBe(true);

    // The drive's quiet window passing changes nothing shown; an unload and an eviction (an
    // image rewritten outside a drive, its kept figures dropped) each do.
    clock += 15_000;
    expect((await c.status({ since: loaded.tag! })).unchanged).toBe(true);
    await c.unload({ library: 1, drive: 1 });
    const unloaded = await c.status({ since: loaded.tag! });
    expect(unloaded.libraries[0]!.cartridges[0]).toMatchObject({ location: 'slot:3', stub: false });
    await c.evict({ library: 1, label: 'AAA001L8' });
    const evicted = await c.status({ since: unloaded.tag! });
    expect(evicted.unchanged).toBeUndefined();
    expect(evicted.libraries[0]!.cartridges[0]).toMatchObject({ label: 'AAA001L8', stub: true });

    // Another emulator process never matches a tag of this one, even with the same libraries.
    await first.stop();
    await start();
    await until(() => (c.connected ? true : undefined));
    const again = await c.status({ since: evicted.tag! });
    expect(again.unchanged).toBeUndefined();
    expect(again.libraries[0]!.cartridges[0]).toMatchObject({ label: 'AAA001L8', stub: true });
  });

  it('shows what a drive wrote once the cartridge is back in its slot, though no status saw it loaded', async () => {
    await start();
    const c = await connect();
    await c.mint({ library: 1, label: 'AAA001L8', slot: 3 });
    const minted = (await c.status()).libraries[0]!.cartridges[0]!;
    // Load, write and unload between two status passes (a quick backup on a loaded machine).
    await c.load({ library: 1, drive: 1, label: 'AAA001L8' });
    const dir = cartridgeDir(config().libraries[0]!.media_dir, 'AAA001L8');
    await appendFile(join(dir, partitionFiles(0).data), Buffer.alloc(1 << 20, 1));
    clock += 15_000;
    await c.unload({ library: 1, drive: 1 });
    const unloaded = (await c.status()).libraries[0]!.cartridges[0]!;
    expect(unloaded.location).toBe('slot:3');
    expect(unloaded.phys_bytes).toBeGreaterThanOrEqual(minted.phys_bytes + (1 << 20));
  });

  it('stops within its grace while a client keeps its connection open and reads nothing', async () => {
    const emu = await start();
    // A raw client that never ends its side and stops reading: only cutting it off ends it.
    const raw = createConnection({ path: config().socket, allowHalfOpen: true });
    await new Promise((resolve) => raw.once('connect', resolve));
    raw.pause();
    const cut = new Promise((resolve) => {
      raw.once('end', resolve);
      raw.once('close', resolve);
    });
    const started = Date.now();
    await emu.stop();
    expect(Date.now() - started).toBeLessThan(2_500);
    raw.resume(); // reading again, it finds its connection cut
    await cut;
    raw.destroy();
  });

  it('reconnects by itself after the emulator restarts, failing calls made meanwhile', async () => {
    const first = await start();
    const c = await connect();
    let connects = 0;
    let closes = 0;
    c.on('connect', () => connects++);
    c.on('close', () => closes++);
    await c.mint({ library: 1, label: 'AAA001L8', slot: 1 });
    await first.stop();
    await until(() => (c.connected ? undefined : true));
    expect(await codeOf(c.hello())).toBe('unavailable');
    await start();
    await until(() => (c.connected ? true : undefined));
    expect([connects, closes]).toEqual([1, 1]);
    expect((await c.status()).libraries[0]!.slots[0]!.label).toBe('AAA001L8');
    await c.close();
    await c.close();
    expect(await codeOf(c.hello())).toBe('unavailable');
  });

  it('starts a transport through the hook, reports its portal and stops it on shutdown', async () => {
    const calls: string[] = [];
    const emu = await startEmulator(config(), silent, {
      transport: async (dp) => {
        calls.push(`start ${[...dp.libraries.keys()].join(',')}`);
        dp.library(1).inventory.setHooks({ mediaLoaded: async (d, l) => void calls.push(`mount ${d} ${l}`) });
        return {
          portal: '127.0.0.1:3260',
          changerName: (lib) => `iqn.test:lib${lib}:lun0`,
          stop: async () => void calls.push('stop'),
        };
      },
    });
    running.push(emu);
    const c = await connect();
    expect((await c.hello()).iscsi_portal).toBe('127.0.0.1:3260');
    await c.mint({ library: 1, label: 'AAA001L8', slot: 1 });
    await c.load({ library: 1, drive: 0, label: 'AAA001L8' });
    expect((await c.status()).libraries[0]!.changer).toBe('iqn.test:lib1:lun0');
    await c.shutdown();
    await emu.stopped;
    expect(calls).toEqual(['start 1', 'mount 0 AAA001L8', 'stop']);
  });
});
