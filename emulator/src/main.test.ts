import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VtlError } from '@vtl/api';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmulatorClient } from './control/client.js';
import type { EmulatorConfig } from './control/protocol.js';
import { Cartridge } from './media/cartridge.js';
import { cartridgeDir } from './media/layout.js';
import { parseVol1 } from './media/vol1.js';
import { makeTempDir } from './util/temp-dir.js';

// The real process, built: `npx tsc -b emulator` runs before the tests (npm test does).
const MAIN = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
const GUARD_MS = 1_500;

let tmp: { path: string; cleanup: () => Promise<void> };
let children: ChildProcess[];
let clients: EmulatorClient[];

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing; run npx tsc -b emulator first`);
});
beforeEach(async () => {
  tmp = await makeTempDir();
  children = [];
  clients = [];
});
afterEach(async () => {
  for (const c of clients) await c.close();
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await tmp.cleanup();
});

function config(): EmulatorConfig {
  return {
    node: 'node-a',
    generation: 3,
    socket: join(tmp.path, 'emulator.sock'),
    iscsi: { bind: '127.0.0.1', port: 0, open: true, allowed_initiators: [] },
    libraries: [
      {
        id: 2,
        name: 'proc',
        serial: 'PROCLIB01',
        product: '03584L32',
        vendor: 'IBM',
        drive_product: 'ULT3580-TD9',
        drive_serials: ['2000000001', '2000000002'],
        num_slots: 10,
        num_ie: 2,
        media_dir: join(tmp.path, 'pool'),
        generation: 9,
      },
    ],
  };
}

interface Proc {
  child: ChildProcess;
  stdout: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function spawnEmulator(configPath: string): Promise<Proc> {
  const child = spawn(process.execPath, [MAIN, '--config', configPath], {
    env: { ...process.env, VTL_UNLOAD_GUARD_MS: String(GUARD_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const stdout: string[] = [];
  child.stdout!.on('data', (d: Buffer) => stdout.push(...d.toString().split('\n').filter(Boolean)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );
  return { child, stdout, exited };
}

async function eventually<T>(attempt: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('emulator process', () => {
  it('keeps inventory and images across kill -9 and exits cleanly on SIGTERM', async () => {
    const cfg = config();
    const cfgPath = join(tmp.path, 'emulator.json');
    await writeFile(cfgPath, JSON.stringify(cfg));

    const first = await spawnEmulator(cfgPath);
    const c = await EmulatorClient.connect(cfg.socket, { retryIntervalMs: 25 });
    clients.push(c);
    expect((await c.hello()).generation).toBe(3);
    for (const [i, label] of ['PRC001L9', 'PRC002L9', 'PRC003L8'].entries()) {
      expect(await c.mint({ library: 2, label, slot: i + 1 })).toEqual({ label, slot: i + 1 });
    }

    await c.load({ library: 2, drive: 0, label: 'PRC002L9' });
    const refused = await c.unload({ library: 2, drive: 0 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VtlError);
    expect(refused).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/active/) });
    expect(await eventually(() => c.unload({ library: 2, drive: 0 }))).toEqual({
      detail: 'drive 0 -> slot 2',
      slot: 2,
    });
    await c.load({ library: 2, drive: 1, label: 'PRC003L8' });

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // The nodeagent's client notices, and finds the restarted emulator by itself.
    await eventually(async () => expect(c.connected).toBe(false));

    const second = await spawnEmulator(cfgPath);
    await eventually(async () => expect(c.connected).toBe(true));
    const lib = (await c.status()).libraries[0]!;
    expect(lib.slots.filter((s) => s.label).map((s) => `${s.kind}:${s.num}=${s.label}`)).toEqual([
      'storage:1=PRC001L9',
      'storage:2=PRC002L9',
    ]);
    expect(lib.drives[1]).toMatchObject({ loaded: 'PRC003L8', source_slot: 3, serial: '2000000002' });
    expect(lib.cartridges.map((x) => [x.label, x.location, x.size_bytes])).toEqual([
      ['PRC001L9', 'slot:1', 80],
      ['PRC002L9', 'slot:2', 80],
      ['PRC003L8', 'drive:1', 80],
    ]);
    // After a restart the quiet window starts over: nothing was active since boot.
    expect(await c.unload({ library: 2, drive: 1 })).toEqual({ detail: 'drive 1 -> slot 3', slot: 3 });

    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(cfg.socket)).toBe(false);
    const logged = second.stdout.map((l) => JSON.parse(l) as { msg: string });
    expect(logged.map((l) => l.msg)).toContain('emulator serving');

    for (const label of ['PRC001L9', 'PRC002L9', 'PRC003L8']) {
      const cart = await Cartridge.open(cartridgeDir(cfg.libraries[0]!.media_dir, label));
      const vol1 = await cart.readBlock(80);
      expect(vol1.kind === 'data' && parseVol1(vol1.data)?.volumeId).toBe(label.slice(0, 6));
      expect(await cart.readBlock(80)).toEqual({ kind: 'filemark' });
      await cart.close();
    }
  });

  it('keeps every block a killed writer handed to the OS', async () => {
    const dir = join(tmp.path, 'pool');
    const script = `
      const { mintCartridge } = await import(${JSON.stringify(resolve(dirname(MAIN), 'media/mint.js'))});
      const { Cartridge } = await import(${JSON.stringify(resolve(dirname(MAIN), 'media/cartridge.js'))});
      const cart = await Cartridge.open(await mintCartridge({ mediaDir: ${JSON.stringify(dir)}, label: 'KIL001L9', generation: 9 }));
      await cart.spaceToEod();
      for (let i = 0; i < 50; i++) await cart.writeBlock(Buffer.alloc(4096, i));
      await cart.sync();
      for (let i = 50; i < 80; i++) await cart.writeBlock(Buffer.alloc(4096, i));
      process.stdout.write('written\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await new Promise<void>((res) =>
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('written') && res()),
    );
    child.kill('SIGKILL');
    await new Promise((res) => child.once('exit', res));

    const cart = await Cartridge.open(cartridgeDir(dir, 'KIL001L9'));
    expect(cart.objectCount).toBe(82);
    await cart.locate(2);
    for (let i = 0; i < 80; i++) {
      const r = await cart.readBlock(8192);
      expect(r.kind === 'data' && r.length === 4096 && r.data[4095] === i).toBe(true);
    }
    await cart.close();
  });
});
