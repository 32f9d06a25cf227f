import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cartridge } from '../media/cartridge.js';
import { cartridgeDir } from '../media/layout.js';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { errorCounters, setTapeAlertFlags } from '../testing/log-pages.js';
import { Cdb, modeSelect6Data } from '../testing/scsi-cdbs.js';
import { mountSmallFilesystem } from '../testing/small-filesystem.js';
import type { ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const fill = (n: number, byte: number) => Buffer.alloc(n, byte);

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A library with one LTO-8 cartridge loaded in drive 0 and a host past its unit attentions. */
async function loaded(opts: { capacityBytes?: number; mediaRoot?: string } = {}): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: 8 }], opts);
  await t.mint(1, 'RW0001L8', 1, opts);
  await t.dp.library(1).inventory.load(0, 'RW0001L8');
  const h = await t.host();
  expect((await h.clearUnitAttentions(DRIVE)).status).toBe(0);
  return h;
}

async function write(h: ScsiHost, block: Buffer): Promise<void> {
  const r = await h.exec(DRIVE, Cdb.write6(block.length), { dataOut: block });
  expect(r.status, JSON.stringify(r.sense)).toBe(0);
}

describe('READ(6) and WRITE(6)', () => {
  it('reads the minted VOL1 label, then the filemark, then end of data', async () => {
    const h = await loaded();
    const label = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect(label.status).toBe(0);
    expect(label.data.toString('ascii', 0, 10)).toBe('VOL1RW0001');
    const fm = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect(fm.status).toBe(2);
    expect(fm.sense).toMatchObject({ key: 0, asc: 0, ascq: 1, filemark: true, information: 80 });
    const eod = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect(eod.sense).toMatchObject({ key: 0x8, asc: 0, ascq: 5, information: 80 });
  });

  it('reports short and long variable blocks with ILI and the residue, unless SILI', async () => {
    const h = await loaded();
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    await write(h, fill(1000, 0x61));
    await write(h, fill(3000, 0x62));
    expect((await h.exec(DRIVE, Cdb.writeFilemarks(1))).status).toBe(0);
    await write(h, fill(500, 0x63));
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);

    const exact = await h.exec(DRIVE, Cdb.read6(1000), { allocation: 1000 });
    expect(exact.status).toBe(0);
    expect(exact.data.equals(fill(1000, 0x61))).toBe(true);

    const short = await h.exec(DRIVE, Cdb.read6(4096), { allocation: 4096 });
    expect(short.status).toBe(2);
    expect(short.sense).toMatchObject({ key: 0, ili: true, information: 1096 });
    expect(short.data.equals(fill(3000, 0x62))).toBe(true);
    expect(short.residual).toBe(1096);
    // REQUEST SENSE returns the same condition once, as st reads it after CHECK CONDITION.
    const again = await h.exec(DRIVE, Cdb.requestSense(), { allocation: 18 });
    expect(again.data[2]).toBe(0x20);
    expect(again.data.readInt32BE(3)).toBe(1096);
    expect((await h.exec(DRIVE, Cdb.requestSense(), { allocation: 18 })).data[2]).toBe(0);

    const fm = await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 });
    expect(fm.sense).toMatchObject({ filemark: true, information: 100 });

    const long = await h.exec(DRIVE, Cdb.read6(200), { allocation: 200 });
    expect(long.status).toBe(2);
    expect(long.sense).toMatchObject({ key: 0, ili: true, information: -300 });
    expect(long.data.equals(fill(200, 0x63))).toBe(true);

    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    const silent = await h.exec(DRIVE, Cdb.read6(4096, { sili: true }), { allocation: 4096 });
    expect(silent.status).toBe(0);
    expect(silent.data.length).toBe(1000);
    expect(silent.residual).toBe(3096);
    // Variable-block mode: SILI hides an overlength block too (SSC-4 6.4).
    const silentLong = await h.exec(DRIVE, Cdb.read6(10, { sili: true }), { allocation: 10 });
    expect(silentLong.status).toBe(0);
    expect(silentLong.data.equals(fill(10, 0x62))).toBe(true);
  });

  it('switches to fixed-block mode by MODE SELECT and counts residues in blocks', async () => {
    const h = await loaded();
    const select = modeSelect6Data(512);
    expect((await h.exec(DRIVE, Cdb.modeSelect6(select.length), { dataOut: select })).status).toBe(0);
    const sense = await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 255 });
    expect(sense.data[3]).toBe(8);
    expect(sense.data[4]).toBe(0x5e);
    expect(sense.data.readUIntBE(4 + 5, 3)).toBe(512);

    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    const four = Buffer.concat([fill(512, 1), fill(512, 2), fill(512, 3), fill(512, 4)]);
    expect((await h.exec(DRIVE, Cdb.write6(4, { fixed: true }), { dataOut: four })).status).toBe(0);
    expect((await h.exec(DRIVE, Cdb.writeFilemarks(1))).status).toBe(0);
    await write(h, fill(100, 9));
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);

    const toMark = await h.exec(DRIVE, Cdb.read6(8, { fixed: true }), { allocation: 8 * 512 });
    expect(toMark.status).toBe(2);
    expect(toMark.sense).toMatchObject({ filemark: true, information: 4 });
    expect(toMark.data.equals(four)).toBe(true);

    const odd = await h.exec(DRIVE, Cdb.read6(2, { fixed: true }), { allocation: 1024 });
    expect(odd.sense).toMatchObject({ key: 0, ili: true, information: 2 });

    const both = await h.exec(DRIVE, Cdb.read6(1, { fixed: true, sili: true }), { allocation: 512 });
    expect(both.sense).toMatchObject({ key: 5, asc: 0x24, fieldPointer: { inCdb: true, byte: 1, bit: 1 } });

    const variable = modeSelect6Data(0);
    expect((await h.exec(DRIVE, Cdb.modeSelect6(variable.length), { dataOut: variable })).status).toBe(0);
    const refused = await h.exec(DRIVE, Cdb.read6(1, { fixed: true }), { allocation: 512 });
    expect(refused.sense).toMatchObject({
      key: 5,
      asc: 0x24,
      fieldPointer: { inCdb: true, byte: 1, bit: 0 },
    });
  });

  it('refuses a block damaged on the pool with MEDIUM ERROR and sets the READ FAILURE flag', async () => {
    const h = await loaded();
    expect((await h.exec(DRIVE, Cdb.space6(3, 0))).status).toBe(0);
    for (let i = 1; i <= 3; i++) await write(h, fill(8192, i));
    expect((await h.exec(DRIVE, Cdb.writeFilemarks(1))).status).toBe(0);
    // Flip one byte of the second block (the VOL1 label and its filemark come first).
    const data = join(cartridgeDir(join(t.dir, 'lib1'), 'RW0001L8'), 'data');
    const bytes = await readFile(data);
    const at = bytes.indexOf(fill(8192, 2));
    expect(at).toBeGreaterThan(0);
    const file = await open(data, 'r+');
    await file.write(Buffer.from([0x99]), 0, 1, at + 100);
    await file.close();
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    expect((await h.exec(DRIVE, Cdb.space6(1, 1))).status).toBe(0);
    expect((await h.exec(DRIVE, Cdb.read6(8192), { allocation: 8192 })).data[0]).toBe(1);
    const damaged = await h.exec(DRIVE, Cdb.read6(8192), { allocation: 8192 });
    expect(damaged.sense).toMatchObject({ key: 0x3, asc: 0x11, ascq: 0 });
    const alerts = await h.exec(DRIVE, Cdb.logSense(0x2e), { allocation: 4096 });
    expect(setTapeAlertFlags(alerts.data)).toEqual([0x05]);
    const readErrors = errorCounters(await h.exec(DRIVE, Cdb.logSense(0x03), { allocation: 4096 }));
    expect(readErrors).toMatchObject({ bytes: 8192, uncorrected: 1 });
  });

  it('moves large blocks through R2T bursts and counts them on the drive', async () => {
    const h = await loaded();
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32BE(i, i);
    // Written at BOP, the block replaces the label and everything after it.
    await write(h, big);
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    const again = await h.exec(DRIVE, Cdb.read6(big.length), { allocation: big.length });
    expect(again.status).toBe(0);
    expect(again.data.equals(big)).toBe(true);
    const drive = t.dp.library(1).inventory.drives()[0]!;
    expect(drive.blocks_written).toBe(1);
    expect(drive.blocks_read).toBe(1);
    // Activity: mounting on load, writing, reading (rewind made it idle between), then idle.
    const activity = () =>
      t.events.filter((e) => e.kind === 'drive_activity' && e.data.drive === 0).map((e) => e.detail);
    await until(() => activity().at(-1) === 'idle');
    expect(activity()).toEqual(['mounting', 'idle', 'writing', 'idle', 'reading', 'idle']);
  });

  it('warns early with EOM and NO SENSE, then refuses with VOLUME OVERFLOW', async () => {
    const h = await loaded({ capacityBytes: 20_000 });
    expect((await h.exec(DRIVE, Cdb.space6(3, 0))).status).toBe(0);
    for (let i = 0; i < 4; i++) await write(h, fill(4096, i));
    // 80 + 4 × 4096 = 16464 bytes; 3400 more lands in the last 1% (from 19800).
    const warned = await h.exec(DRIVE, Cdb.write6(3400), { dataOut: fill(3400, 0xee) });
    expect(warned.status).toBe(2);
    expect(warned.sense).toMatchObject({ key: 0, asc: 0, ascq: 2, eom: true, information: 0 });
    const pos = await h.exec(DRIVE, Cdb.readPosition(), { allocation: 20 });
    expect(pos.data[0]! & 0x40).toBe(0x40);

    const full = await h.exec(DRIVE, Cdb.write6(4096), { dataOut: fill(4096, 0xff) });
    expect(full.sense).toMatchObject({ key: 0xd, asc: 0, ascq: 2, eom: true, information: 4096 });

    expect((await h.exec(DRIVE, Cdb.space6(0, -1))).status).toBe(0);
    const last = await h.exec(DRIVE, Cdb.read6(3400), { allocation: 3400 });
    expect(last.status).toBe(0);
    expect(last.data.equals(fill(3400, 0xee))).toBe(true);
  });

  it('keeps what was written once the cartridge leaves the drive', async () => {
    const h = await loaded();
    expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
    await write(h, Buffer.from('first block'));
    expect((await h.exec(DRIVE, Cdb.writeFilemarks(1))).status).toBe(0);
    expect((await h.exec(DRIVE, Cdb.loadUnload(false))).status).toBe(0);
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 2, asc: 0x3a });
    await t.dp.library(1).inventory.unload(0, { force: true });

    const cart = await Cartridge.open(cartridgeDir(t.dp.library(1).config.media_dir, 'RW0001L8'));
    try {
      const r = await cart.readBlock(100);
      expect(r.kind === 'data' && r.data.toString()).toBe('first block');
      expect((await cart.readBlock(100)).kind).toBe('filemark');
      expect((await cart.readBlock(100)).kind).toBe('eod');
    } finally {
      await cart.close();
    }
  });
});

describe('buffered mode (the drive write buffer)', () => {
  const BLOCK = 256 * 1024;

  it('reports blocks that never reached the pool as a deferred error on the next command', async () => {
    const fs = await mountSmallFilesystem(2 * 1024 * 1024);
    try {
      const h = await loaded({ mediaRoot: fs.path });
      expect((await h.exec(DRIVE, Cdb.space6(3, 0))).status).toBe(0);
      const statuses: number[] = [];
      let deferred: ScsiResultSeen | undefined;
      for (let i = 1; i <= 12 && !deferred; i++) {
        const r = await h.exec(DRIVE, Cdb.write6(BLOCK), { dataOut: fill(BLOCK, i) });
        statuses.push(r.status);
        if (r.status !== 0) deferred = r;
      }
      // Or the failure is still on its way: the filemark (a sync point) finds it and is not written.
      deferred ??= await h.exec(DRIVE, Cdb.writeFilemarks(1));
      const landed = statuses.filter((s) => s === 0).length;
      expect(deferred.status).toBe(2);
      expect(deferred.sense).toMatchObject({ responseCode: 0x71, key: 0x3, asc: 0x0c, ascq: 0 });
      expect(deferred.sense?.information).toBeGreaterThan(0);
      // Told once: the tape now ends after the blocks that made it, and commands work again.
      const eod = await h.exec(DRIVE, Cdb.space6(3, 0));
      expect(eod.status).toBe(0);
      expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
      expect((await h.exec(DRIVE, Cdb.space6(1, 1))).status).toBe(0);
      let readBack = 0;
      for (;;) {
        const r = await h.exec(DRIVE, Cdb.read6(BLOCK), { allocation: BLOCK });
        if (r.status !== 0) break;
        readBack += 1;
        expect(r.data[BLOCK - 1]).toBe(readBack);
      }
      expect(readBack).toBeGreaterThan(0);
      expect(readBack).toBeLessThan(landed + 1);
    } finally {
      await t?.stop();
      await fs.cleanup();
    }
  });

  it('reports an unbuffered WRITE that cannot reach the pool as a current write error, once', async () => {
    const fs = await mountSmallFilesystem(2 * 1024 * 1024);
    try {
      const h = await loaded({ mediaRoot: fs.path });
      const unbuffered = modeSelect6Data(undefined);
      unbuffered[2] = 0x00;
      expect((await h.exec(DRIVE, Cdb.modeSelect6(unbuffered.length), { dataOut: unbuffered })).status).toBe(
        0,
      );
      expect((await h.exec(DRIVE, Cdb.space6(3, 0))).status).toBe(0);
      let failed: ScsiResultSeen | undefined;
      let landed = 0;
      for (let i = 1; i <= 12 && !failed; i++) {
        const r = await h.exec(DRIVE, Cdb.write6(BLOCK), { dataOut: fill(BLOCK, i) });
        if (r.status === 0) landed += 1;
        else failed = r;
      }
      expect(failed?.status).toBe(2);
      // Variable mode: the information field is the byte count that did not reach the tape.
      expect(failed?.sense).toMatchObject({
        responseCode: 0x70,
        key: 0x3,
        asc: 0x0c,
        ascq: 0,
        information: BLOCK,
      });
      const alerts = await h.exec(DRIVE, Cdb.logSense(0x2e), { allocation: 4096 });
      expect(setTapeAlertFlags(alerts.data)).toContain(0x06);
      const writeErrors = errorCounters(await h.exec(DRIVE, Cdb.logSense(0x02), { allocation: 4096 }));
      expect(writeErrors).toMatchObject({ bytes: landed * BLOCK, uncorrected: 1 });
      // Told once: the next commands work and the tape ends after the blocks that made it.
      expect((await h.exec(DRIVE, Cdb.rewind())).status).toBe(0);
      expect((await h.exec(DRIVE, Cdb.space6(1, 1))).status).toBe(0);
      let readBack = 0;
      for (;;) {
        const r = await h.exec(DRIVE, Cdb.read6(BLOCK), { allocation: BLOCK });
        if (r.status !== 0) {
          expect(r.sense).toMatchObject({ key: 0x8 });
          break;
        }
        readBack += 1;
        expect(r.data[BLOCK - 1]).toBe(readBack);
      }
      expect(readBack).toBe(landed);
    } finally {
      await t?.stop();
      await fs.cleanup();
    }
  });

  it('switches to unbuffered writes with MODE SELECT and refuses other buffer modes', async () => {
    const h = await loaded();
    const header = async () => (await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 12 })).data[2]! & 0x70;
    expect(await header()).toBe(0x10);
    const unbuffered = modeSelect6Data(undefined);
    unbuffered[2] = 0x00;
    expect((await h.exec(DRIVE, Cdb.modeSelect6(unbuffered.length), { dataOut: unbuffered })).status).toBe(0);
    expect(await header()).toBe(0x00);
    expect((await h.exec(DRIVE, Cdb.space6(3, 0))).status).toBe(0);
    await write(h, fill(4096, 7));
    const bad = modeSelect6Data(undefined);
    bad[2] = 0x20;
    const refused = await h.exec(DRIVE, Cdb.modeSelect6(bad.length), { dataOut: bad });
    expect(refused.sense).toMatchObject({ key: 0x5, asc: 0x26, ascq: 0 });
    expect(await header()).toBe(0x00);
  });
});

type ScsiResultSeen = Awaited<ReturnType<ScsiHost['exec']>>;
