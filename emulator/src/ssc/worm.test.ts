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
/** DATA PROTECT, WORM MEDIUM - OVERWRITE ATTEMPTED. */
const WORM_OVERWRITE = { key: 7, asc: 0x30, ascq: 0x0c };

async function withWorm(label: string, opts: { evict?: boolean } = {}): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: 8 }]);
  await t.mint(1, label, 1, { worm: true });
  if (opts.evict) await t.evict(1, label);
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  await t.dp.library(1).inventory.load(0, label);
  await h.exec(DRIVE, Cdb.tur());
  return h;
}

async function mediumType(h: ScsiHost): Promise<number> {
  const r = await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 12 });
  ok(r);
  return r.data[1]!;
}

describe('WORM cartridges', () => {
  it('report WORM: medium type 8Ch, WORMM in page 1Dh, medium type 80h in the MAM', async () => {
    const h = await withWorm('WRM001LY');
    expect(await mediumType(h)).toBe(0x8c);
    const cfg = await h.exec(DRIVE, Cdb.modeSense6(0x1d, { dbd: true }), { allocation: 255 });
    ok(cfg);
    expect(cfg.data[4 + 2]! & 0x01).toBe(1);
    const mam = await h.exec(DRIVE, [0x8c, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x08, 0, 0, 0x10, 0, 0, 0], {
      allocation: 4096,
    });
    ok(mam);
    expect(mam.data[4 + 5]).toBe(0x80);
  });

  it('append at end of data, and refuse overwriting, erasing or reformatting what is written', async () => {
    const h = await withWorm('WRM002LY');
    // Past the minted label and its filemark: end of data, where appending is allowed.
    ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
    ok(await h.exec(DRIVE, Cdb.write6(5), { dataOut: Buffer.from('first') }));
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    ok(await h.exec(DRIVE, Cdb.write6(6), { dataOut: Buffer.from('second') }));
    ok(await h.exec(DRIVE, Cdb.rewind()));
    expect((await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('over') })).sense).toMatchObject(
      WORM_OVERWRITE,
    );
    expect((await h.exec(DRIVE, Cdb.writeFilemarks(1))).sense).toMatchObject(WORM_OVERWRITE);
    expect((await h.exec(DRIVE, Cdb.erase())).sense).toMatchObject(WORM_OVERWRITE);
    expect((await h.exec(DRIVE, [0x04, 0, 0, 0, 0, 0])).sense).toMatchObject(WORM_OVERWRITE);
    // In the middle too: one block back from the end.
    ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    expect((await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('over') })).sense).toMatchObject(
      WORM_OVERWRITE,
    );
    // Everything written is still there, and VERIFY with VBF reads it back through two files:
    // the label's and "first"'s, stopping after the second filemark.
    ok(await h.exec(DRIVE, Cdb.rewind()));
    ok(await h.exec(DRIVE, [0x13, 0x08, 0, 0, 2, 0]));
    const at = await h.exec(DRIVE, Cdb.readPosition(0x06), { allocation: 32 });
    expect(Number(at.data.readBigUInt64BE(8))).toBe(4);
    // A third filemark is not there: BLANK CHECK at end of data, one filemark short.
    expect((await h.exec(DRIVE, [0x13, 0x08, 0, 0, 1, 0])).sense).toMatchObject({
      key: 8,
      ascq: 5,
      information: 1,
    });
    // Comparing with host data is not offered.
    expect((await h.exec(DRIVE, [0x13, 0x02, 0, 0, 1, 0])).sense).toMatchObject({ key: 5, asc: 0x24 });
    ok(await h.exec(DRIVE, Cdb.rewind()));
    ok(await h.exec(DRIVE, Cdb.space6(1, 1)));
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data.toString()).toBe('first');
    ok(await h.exec(DRIVE, Cdb.space6(1, 1)));
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data.toString()).toBe('second');
  });

  it('stays WORM when evicted: the stub in the drive reports it', async () => {
    const h = await withWorm('WRM003LY', { evict: true });
    await h.exec(DRIVE, Cdb.tur());
    expect(await mediumType(h)).toBe(0x8c);
  });
});
