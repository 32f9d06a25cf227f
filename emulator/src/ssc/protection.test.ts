import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';
import { rsCrc } from './protection.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);
const modeSense10 = [0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0];

async function lto6(): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: 6 }]);
  await t.mint(1, 'RSC001L6', 1, { generation: 6 });
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  await t.dp.library(1).inventory.load(0, 'RSC001L6');
  await h.exec(DRIVE, Cdb.tur());
  ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
  return h;
}

/** Sets page 0Ah/F0h: Reed-Solomon CRC with LBP_W and LBP_R as given. */
async function protection(h: ScsiHost, flags: number): Promise<void> {
  const page = Buffer.from((await h.exec(DRIVE, modeSense10, { allocation: 48 })).data);
  page[0] = page[1] = 0;
  page[20] = 0x01;
  page[21] = 0x04;
  page[22] = flags;
  ok(await h.exec(DRIVE, Cdb.modeSelect10(page.length), { dataOut: page }));
}

const withRs = (data: Buffer) => {
  const pi = Buffer.alloc(4);
  pi.writeUInt32BE(rsCrc(data));
  return Buffer.concat([data, pi]);
};

describe('Reed-Solomon CRC logical block protection (LBP method 1)', () => {
  it('computes the GF(256) CRC LTO drives and LTFS use', () => {
    // One byte b gives the generator coefficients times b: the values of IBM's table.
    expect(rsCrc(Buffer.from([0x01]))).toBe(0x38cf3801);
    expect(rsCrc(Buffer.from([0x80]))).toBe(0x51475180);
    expect(rsCrc(Buffer.from([0xff]))).toBe(0x763f76ff);
    expect(rsCrc(Buffer.alloc(0))).toBe(0);
  });

  it('checks it on write, keeps the data, and generates it again on read', async () => {
    const h = await lto6();
    await protection(h, 0xc0);
    const data = Buffer.from('a block under Reed-Solomon protection');
    const sent = withRs(data);
    ok(await h.exec(DRIVE, Cdb.write6(sent.length), { dataOut: sent }));
    const bad = Buffer.from(sent);
    bad[bad.length - 1]! ^= 0xff;
    expect((await h.exec(DRIVE, Cdb.write6(bad.length), { dataOut: bad })).sense).toMatchObject({
      key: 0x0b,
      asc: 0x10,
      ascq: 0x01,
    });
    // CRC32C bytes are not Reed-Solomon ones either.
    const crc32cSent = Buffer.concat([data, Buffer.from([1, 2, 3, 4])]);
    expect((await h.exec(DRIVE, Cdb.write6(crc32cSent.length), { dataOut: crc32cSent })).sense?.asc).toBe(
      0x10,
    );

    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    expect((await h.exec(DRIVE, Cdb.read6(sent.length), { allocation: sent.length })).data).toEqual(sent);
    // Without LBP_R the host gets the data alone: the drive keeps its check to itself.
    await protection(h, 0x00);
    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    expect((await h.exec(DRIVE, Cdb.read6(200), { allocation: 200 })).data).toEqual(data);
    // A block written without protection gets its CRC generated when read with LBP_R.
    const plain = Buffer.from('written without protection');
    ok(await h.exec(DRIVE, Cdb.write6(plain.length), { dataOut: plain }));
    await protection(h, 0x40);
    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    const read = await h.exec(DRIVE, Cdb.read6(plain.length + 4), { allocation: plain.length + 4 });
    ok(read);
    expect(read.data).toEqual(withRs(plain));
  });
});
