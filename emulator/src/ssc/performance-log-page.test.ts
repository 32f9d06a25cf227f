import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const logSense = (page: number, subpage: number) => [0x4d, 0, 0x40 | page, subpage, 0, 0, 0, 0x10, 0, 0];

describe('IBM log page 37h (performance characteristics)', () => {
  it('is listed, and answers the parameters LTFS reads on subpages 00h and 64h', async () => {
    t = await startLibraryTarget([{ id: 1, generation: 8 }]);
    const h = await t.host();
    await h.clearUnitAttentions(DRIVE);
    const supported = await h.exec(DRIVE, Cdb.logSense(0), { allocation: 4096 });
    expect([...supported.data.subarray(4)]).toContain(0x37);

    const health = await h.exec(DRIVE, logSense(0x37, 0), { allocation: 4096 });
    expect(health.status).toBe(0);
    expect(health.data[0]).toBe(0x37);
    // Parameter 0001h, one byte: the cartridge condition in percent.
    expect(health.data.readUInt16BE(4)).toBe(0x0001);
    expect(health.data[7]).toBe(1);
    expect(health.data[8]).toBe(100);

    const loss = await h.exec(DRIVE, logSense(0x37, 0x64), { allocation: 4096 });
    expect(loss.status).toBe(0);
    expect([loss.data[0], loss.data[1]]).toEqual([0x40 | 0x37, 0x64]);
    expect(loss.data.readUInt16BE(4)).toBe(0x7113);
    expect(loss.data[7]).toBe(4);
    expect(loss.data.readUInt32BE(8)).toBe(0);

    // Subpages of other pages, and other subpages of 37h, are refused.
    for (const [page, subpage] of [
      [0x37, 0x01],
      [0x31, 0x64],
    ] as const) {
      expect((await h.exec(DRIVE, logSense(page, subpage), { allocation: 4096 })).sense).toMatchObject({
        key: 5,
        asc: 0x24,
      });
    }
  });
});
