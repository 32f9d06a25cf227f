import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);

/**
 * Tape layout after `prepared`: objects 0 A, 1 B, 2 FM, 3 C, 4 D, 5 E, 6 FM, 7 F; EOD at 8.
 * Blocks are one letter long so a READ says where the tape is.
 */
async function prepared(): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: 7 }]);
  await t.mint(1, 'POS001L7', 1);
  await t.dp.library(1).inventory.load(0, 'POS001L7');
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  ok(await h.exec(DRIVE, Cdb.rewind()));
  for (const item of ['A', 'B', 1, 'C', 'D', 'E', 1, 'F']) {
    if (typeof item === 'number') ok(await h.exec(DRIVE, Cdb.writeFilemarks(item)));
    else ok(await h.exec(DRIVE, Cdb.write6(1), { dataOut: Buffer.from(item) }));
  }
  ok(await h.exec(DRIVE, Cdb.rewind()));
  return h;
}

async function next(h: ScsiHost): Promise<string> {
  const r = await h.exec(DRIVE, Cdb.read6(16, { sili: true }), { allocation: 16 });
  if (r.sense?.filemark) return 'FM';
  if (r.sense?.key === 0x8) return 'EOD';
  return r.data.toString();
}

async function longPosition(h: ScsiHost): Promise<{ object: number; file: number; bop: boolean }> {
  const r = await h.exec(DRIVE, Cdb.readPosition(6), { allocation: 32 });
  ok(r);
  return {
    object: Number(r.data.readBigUInt64BE(8)),
    file: Number(r.data.readBigUInt64BE(16)),
    bop: (r.data[0]! & 0x80) !== 0,
  };
}

describe('SPACE', () => {
  it('spaces blocks forward and stops past a filemark with FM and the residue', async () => {
    const h = await prepared();
    ok(await h.exec(DRIVE, Cdb.space6(0, 1)));
    const stopped = await h.exec(DRIVE, Cdb.space6(0, 5));
    expect(stopped.sense).toMatchObject({ key: 0, asc: 0, ascq: 1, filemark: true, information: 4 });
    expect(await next(h)).toBe('C');
  });

  it('spaces backwards and stops on the BOP side of a filemark, or at BOP with EOM', async () => {
    const h = await prepared();
    ok(await h.exec(DRIVE, Cdb.space6(1, 2)));
    expect(await longPosition(h)).toEqual({ object: 7, file: 2, bop: false });
    const back = await h.exec(DRIVE, Cdb.space6(0, -2));
    expect(back.sense).toMatchObject({ filemark: true, information: -2 });
    expect((await longPosition(h)).object).toBe(6);
    ok(await h.exec(DRIVE, Cdb.space16(1, -1)));
    expect((await longPosition(h)).object).toBe(2);
    expect(await next(h)).toBe('FM');
    ok(await h.exec(DRIVE, Cdb.locate10(1)));
    const bop = await h.exec(DRIVE, Cdb.space6(0, -5));
    expect(bop.sense).toMatchObject({ key: 0, asc: 0, ascq: 4, eom: true, information: -4 });
    expect(await longPosition(h)).toEqual({ object: 0, file: 0, bop: true });
  });

  it('hits end of data with BLANK CHECK and spaces straight to it', async () => {
    const h = await prepared();
    const eod = await h.exec(DRIVE, Cdb.space16(1, 5));
    expect(eod.sense).toMatchObject({ key: 0x8, asc: 0, ascq: 5, information: 3 });
    ok(await h.exec(DRIVE, Cdb.rewind()));
    ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
    expect((await longPosition(h)).object).toBe(8);
    expect(await next(h)).toBe('EOD');
    const sequential = await h.exec(DRIVE, Cdb.space6(2, 1));
    expect(sequential.sense).toMatchObject({ key: 5, asc: 0x24, fieldPointer: { inCdb: true, byte: 1 } });
  });
});

describe('LOCATE and READ POSITION', () => {
  it('locates to objects, files and end of data and reports the position in every form', async () => {
    const h = await prepared();
    const short0 = await h.exec(DRIVE, Cdb.readPosition(0), { allocation: 20 });
    expect(short0.data.length).toBe(20);
    expect(short0.data[0]! & 0x80).toBe(0x80);

    ok(await h.exec(DRIVE, Cdb.locate10(4)));
    const short = await h.exec(DRIVE, Cdb.readPosition(0), { allocation: 20 });
    expect(short.data[0]! & 0x80).toBe(0);
    expect(short.data.readUInt32BE(4)).toBe(4);
    expect(short.data.readUInt32BE(8)).toBe(4);
    expect(await next(h)).toBe('D');

    ok(await h.exec(DRIVE, Cdb.locate16(2, 1)));
    expect(await longPosition(h)).toEqual({ object: 7, file: 2, bop: false });
    expect(await next(h)).toBe('F');

    ok(await h.exec(DRIVE, Cdb.locate16(1)));
    expect(await next(h)).toBe('B');
    ok(await h.exec(DRIVE, Cdb.locate16(0, 3)));
    expect((await longPosition(h)).object).toBe(8);

    const beyond = await h.exec(DRIVE, Cdb.locate10(50));
    expect(beyond.sense).toMatchObject({ key: 0x8, asc: 0, ascq: 5 });
    const ext = await h.exec(DRIVE, Cdb.readPosition(8, 32), { allocation: 32 });
    expect(Number(ext.data.readBigUInt64BE(8))).toBe(8);
    const bad = await h.exec(DRIVE, Cdb.readPosition(3), { allocation: 32 });
    expect(bad.sense).toMatchObject({ key: 5, asc: 0x24, fieldPointer: { inCdb: true, byte: 1 } });
  });

  it('erases from the position to the end of the tape', async () => {
    const h = await prepared();
    ok(await h.exec(DRIVE, Cdb.locate10(3)));
    ok(await h.exec(DRIVE, Cdb.erase()));
    ok(await h.exec(DRIVE, Cdb.rewind()));
    expect([await next(h), await next(h), await next(h), await next(h)]).toEqual(['A', 'B', 'FM', 'EOD']);
  });

  it('needs a cartridge: NOT READY, MEDIUM NOT PRESENT', async () => {
    t = await startLibraryTarget([{ id: 1 }]);
    const h = await t.host();
    await h.clearUnitAttentions(DRIVE);
    for (const cdb of [Cdb.readPosition(), Cdb.rewind(), Cdb.space6(0, 1), Cdb.locate10(0), Cdb.read6(10)]) {
      expect((await h.exec(DRIVE, cdb, { allocation: 32 })).sense).toMatchObject({ key: 2, asc: 0x3a });
    }
  });
});
