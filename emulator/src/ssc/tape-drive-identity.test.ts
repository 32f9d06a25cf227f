import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { LIBRARY_TARGET, startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';

const run = promisify(execFile);
let t: LibraryTarget;

afterEach(async () => {
  await t?.stop();
});

/** Drive 0 of library 1 is LUN 1 (the changer is LUN 0). */
const DRIVE = 1;

describe('tape drive identity', () => {
  it('answers INQUIRY as an IBM ULT3580 with the drive serial in VPD 80h and 83h', async () => {
    t = await startLibraryTarget([{ id: 1, generation: 8 }]);
    const h = await t.host();
    const std = await h.exec(DRIVE, Cdb.inquiry(96), { allocation: 96 });
    expect(std.status).toBe(0);
    expect(std.data[0]).toBe(0x01);
    expect(std.data[1]! & 0x80).toBe(0x80);
    expect(std.data.toString('ascii', 8, 16)).toBe('IBM     ');
    expect(std.data.toString('ascii', 16, 32)).toBe('ULT3580-TD8     ');
    expect(std.data.toString('ascii', 32, 36)).toMatch(/^\S{4}$/);

    const pages = await h.exec(DRIVE, Cdb.inquiry(255, 0x00), { allocation: 255 });
    expect([...pages.data.subarray(4)]).toEqual([0x00, 0x80, 0x83]);

    const serial = await h.exec(DRIVE, Cdb.inquiry(255, 0x80), { allocation: 255 });
    expect(serial.data.toString('ascii', 4)).toBe('1001000001');

    const id = await h.exec(DRIVE, Cdb.inquiry(255, 0x83), { allocation: 255 });
    const text = id.data.toString('latin1');
    expect(text).toContain('IBM     ULT3580-TD8     1001000001');
    // The NAA designator is an IBM (OUI 005076) NAA-5 name, stable for the serial.
    const naaAt = id.data.indexOf(Buffer.from([0x01, 0x03, 0x00, 0x08]));
    expect(naaAt).toBeGreaterThanOrEqual(4);
    expect(
      id.data
        .subarray(naaAt + 4, naaAt + 8)
        .toString('hex')
        .startsWith('5005076'),
    ).toBe(true);
  });

  it('is read by iscsi-inq (libiscsi) like a real drive', async () => {
    t = await startLibraryTarget([{ id: 1, generation: 6, driveProduct: 'ULT3580-HH6' }]);
    const url = `iscsi://127.0.0.1:${t.target.port}/${LIBRARY_TARGET}/${DRIVE}`;
    const { stdout } = await run('iscsi-inq', ['-i', 'iqn.2025-01.io.vtl.test:inq', url]);
    expect(stdout).toMatch(/Peripheral Device Type:SEQUENTIAL_ACCESS/);
    expect(stdout).toContain('ULT3580-HH6');
    const vpd = await run('iscsi-inq', ['-i', 'iqn.2025-01.io.vtl.test:inq', '-e', '1', '-c', '128', url]);
    expect(vpd.stdout).toContain('1001000001');
  });

  it('reports NOT READY without a cartridge and a unit attention after the load', async () => {
    t = await startLibraryTarget();
    await t.mint(1, 'AAA001L8', 1);
    const h = await t.host();
    const empty = await h.clearUnitAttentions(DRIVE);
    expect(empty.status).toBe(2);
    expect(empty.sense).toMatchObject({ key: 0x2, asc: 0x3a, ascq: 0x00 });
    const sense = await h.exec(DRIVE, Cdb.requestSense(), { allocation: 252 });
    expect(sense.status).toBe(0);
    expect(sense.data[2]! & 0x0f).toBe(0x2);
    expect(sense.data[12]).toBe(0x3a);

    await t.dp.library(1).inventory.load(0, 'AAA001L8');
    const ua = await h.exec(DRIVE, Cdb.tur());
    expect(ua.sense).toMatchObject({ key: 0x6, asc: 0x28, ascq: 0x00 });
    expect((await h.exec(DRIVE, Cdb.tur())).status).toBe(0);
  });

  it('states its block limits, densities and supported opcodes', async () => {
    t = await startLibraryTarget([{ id: 1, generation: 6 }]);
    const h = await t.host();
    await h.clearUnitAttentions(DRIVE);
    const limits = await h.exec(DRIVE, Cdb.readBlockLimits(), { allocation: 6 });
    expect(limits.data.readUIntBE(1, 3)).toBe(0x800000);
    expect(limits.data.readUInt16BE(4)).toBe(1);

    const density = await h.exec(DRIVE, Cdb.reportDensity(), { allocation: 4096 });
    expect(density.status).toBe(0);
    const descriptors = (density.data.readUInt16BE(0) - 2) / 52;
    expect(descriptors).toBe(3);
    const at = (i: number) => density.data.subarray(4 + 52 * i, 4 + 52 * (i + 1));
    // LTO-6 writes LTO-6 (default) and LTO-5, reads LTO-4.
    expect([0, 1, 2].map((i) => at(i)[0])).toEqual([0x5a, 0x58, 0x46]);
    expect([0, 1, 2].map((i) => at(i)[2]! & 0xa0)).toEqual([0xa0, 0x80, 0x00]);
    expect(at(0).toString('ascii', 24, 32).trim()).toBe('U-616');

    const media = await h.exec(DRIVE, Cdb.reportDensity({ media: true }));
    expect(media.sense).toMatchObject({ key: 0x2, asc: 0x3a });

    const ops = await h.exec(DRIVE, Cdb.reportSupportedOpcodes(), { allocation: 8192 });
    expect(ops.status).toBe(0);
    const listed = new Set<number>();
    for (let i = 4; i < 4 + ops.data.readUInt32BE(0); i += 8) listed.add(ops.data[i]!);
    for (const op of [
      0x00, 0x01, 0x03, 0x05, 0x08, 0x0a, 0x10, 0x11, 0x12, 0x15, 0x16, 0x17, 0x19, 0x1a, 0x1b,
    ]) {
      expect(listed.has(op), `opcode 0x${op.toString(16)}`).toBe(true);
    }
    for (const op of [0x1e, 0x2b, 0x34, 0x44, 0x4c, 0x4d, 0x55, 0x5a, 0x8c, 0x8d, 0x91, 0x92, 0xa0, 0xa3]) {
      expect(listed.has(op), `opcode 0x${op.toString(16)}`).toBe(true);
    }
    const unknown = await h.exec(DRIVE, [0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(unknown.sense).toMatchObject({ key: 0x5, asc: 0x20, ascq: 0x00 });
  });

  it('lists every library LUN in REPORT LUNS and honours RESERVE between hosts', async () => {
    t = await startLibraryTarget([
      { id: 1, drives: 2 },
      { id: 3, drives: 1 },
    ]);
    const a = await t.host();
    const b = await t.host();
    const luns = await a.exec(0, Cdb.reportLuns(), { allocation: 1024 });
    const count = luns.data.readUInt32BE(0) / 8;
    const list = Array.from({ length: count }, (_, i) => luns.data.readUInt16BE(8 + 8 * i));
    expect(list).toEqual([0, 1, 2, 3, 4]);
    expect(t.devices.layout.map((r) => [r.lun, r.library, r.kind, r.drive])).toEqual([
      [0, 1, 'changer', undefined],
      [1, 1, 'drive', 0],
      [2, 1, 'drive', 1],
      [3, 3, 'changer', undefined],
      [4, 3, 'drive', 0],
    ]);

    await a.clearUnitAttentions(DRIVE);
    await b.clearUnitAttentions(DRIVE);
    expect((await a.exec(DRIVE, Cdb.reserve6())).status).toBe(0);
    expect((await b.exec(DRIVE, Cdb.tur())).status).toBe(0x18);
    expect((await b.exec(DRIVE, Cdb.inquiry(36), { allocation: 36 })).status).toBe(0);
    expect((await a.exec(DRIVE, Cdb.release6())).status).toBe(0);
    expect((await b.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 0x2, asc: 0x3a });
  });
});
