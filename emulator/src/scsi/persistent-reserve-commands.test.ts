import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { ScsiHost } from '../testing/scsi-host.js';
import { PrIn, PrOut } from './persistent-reserve-commands.js';
import { PrType } from './persistent-reservations.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const CHANGER = 0;
const DRIVE = 1;
const CONFLICT = 0x18;
const KEY_A = 0xaaaa0001n;
const KEY_B = 0xbbbb0002n;

async function prOut(h: ScsiHost, lun: number, action: number, key: bigint, sark = 0n, type = 0) {
  return h.exec(lun, Cdb.persistentReserveOut(action, type), { dataOut: Cdb.prOutParameters(key, sark) });
}

async function prIn(h: ScsiHost, lun: number, action: number) {
  const r = await h.exec(lun, Cdb.persistentReserveIn(action), { allocation: 1024 });
  expect(r.status).toBe(0);
  return r.data;
}

const keysOf = (data: Buffer) =>
  Array.from({ length: data.readUInt32BE(4) / 8 }, (_, i) => data.readBigUInt64BE(8 + 8 * i));

/** Reservation key and type from READ RESERVATION, or undefined when none is held. */
function reservationOf(data: Buffer): { key: bigint; type: number } | undefined {
  return data.readUInt32BE(4) === 0 ? undefined : { key: data.readBigUInt64BE(8), type: data[21]! & 0x0f };
}

/** A library with a cartridge in drive 0 and two hosts past their unit attentions. */
async function twoHosts(): Promise<[ScsiHost, ScsiHost]> {
  t = await startLibraryTarget([{ id: 1, generation: 8 }]);
  await t.mint(1, 'PR0001L8', 1);
  await t.dp.library(1).inventory.load(0, 'PR0001L8');
  const a = await t.host('iqn.2025-01.io.vtl.test:backup-a');
  const b = await t.host('iqn.2025-01.io.vtl.test:backup-b');
  for (const h of [a, b]) for (const lun of [CHANGER, DRIVE]) await h.clearUnitAttentions(lun);
  return [a, b];
}

describe('PERSISTENT RESERVE IN/OUT through libiscsi', () => {
  it('reports its capabilities: compatible RESERVE/RELEASE handling, six types, no power-loss persistence', async () => {
    const [a] = await twoHosts();
    const caps = await prIn(a, DRIVE, PrIn.REPORT_CAPABILITIES);
    expect(caps.readUInt16BE(0)).toBe(8);
    expect(caps[2]).toBe(0x10);
    expect(caps[3]).toBe(0x80);
    expect(caps.readUInt16BE(4)).toBe(0xea01);
    expect(reservationOf(await prIn(a, DRIVE, PrIn.READ_RESERVATION))).toBeUndefined();
    expect(keysOf(await prIn(a, DRIVE, PrIn.READ_KEYS))).toEqual([]);
  });

  it('shares a drive as backup software does: register, reserve exclusively, preempt a host that went away', async () => {
    const [a, b] = await twoHosts();
    expect((await prOut(a, DRIVE, PrOut.REGISTER, 0n, KEY_A)).status).toBe(0);
    expect((await prOut(b, DRIVE, PrOut.REGISTER, 0n, KEY_B)).status).toBe(0);
    const keys = await prIn(b, DRIVE, PrIn.READ_KEYS);
    expect(keys.readUInt32BE(0)).toBe(2);
    expect(keysOf(keys)).toEqual([KEY_A, KEY_B]);

    expect((await prOut(a, DRIVE, PrOut.RESERVE, KEY_A, 0n, PrType.EXCLUSIVE_ACCESS)).status).toBe(0);
    expect(reservationOf(await prIn(b, DRIVE, PrIn.READ_RESERVATION))).toEqual({
      key: KEY_A,
      type: PrType.EXCLUSIVE_ACCESS,
    });
    // The holder works; the other host is kept off the medium but may still identify the drive.
    expect((await a.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data.toString('ascii', 0, 4)).toBe(
      'VOL1',
    );
    expect((await b.exec(DRIVE, Cdb.tur())).status).toBe(CONFLICT);
    expect((await b.exec(DRIVE, Cdb.rewind())).status).toBe(CONFLICT);
    expect((await b.exec(DRIVE, Cdb.write6(512), { dataOut: Buffer.alloc(512) })).status).toBe(CONFLICT);
    expect((await b.exec(DRIVE, Cdb.inquiry(36), { allocation: 36 })).status).toBe(0);
    expect((await b.exec(DRIVE, Cdb.logSense(0x00), { allocation: 64 })).status).toBe(0);
    // It may not prevent removal, but may always allow it (its own prevention is its to give up).
    expect((await b.exec(DRIVE, Cdb.preventAllow(true))).status).toBe(CONFLICT);
    expect((await b.exec(DRIVE, Cdb.preventAllow(false))).status).toBe(0);
    // RESERVE(6): GOOD without effect for the holder, a conflict for the other host.
    expect((await a.exec(DRIVE, Cdb.reserve6())).status).toBe(0);
    expect((await b.exec(DRIVE, Cdb.reserve6())).status).toBe(CONFLICT);
    expect((await b.exec(DRIVE, Cdb.release6())).status).toBe(CONFLICT);
    expect((await a.exec(DRIVE, Cdb.release6())).status).toBe(0);
    expect(reservationOf(await prIn(b, DRIVE, PrIn.READ_RESERVATION))?.key).toBe(KEY_A);

    // READ FULL STATUS names each registrant by its iSCSI initiator port.
    const full = await prIn(b, DRIVE, PrIn.READ_FULL_STATUS);
    const first = full.subarray(8);
    expect(first.readBigUInt64BE(0)).toBe(KEY_A);
    expect(first[12]).toBe(0x01);
    expect(first[13]).toBe(PrType.EXCLUSIVE_ACCESS);
    const idLength = first.readUInt32BE(20);
    const transportId = first.subarray(24, 24 + idLength);
    expect(transportId[0]).toBe(0x45);
    expect(transportId.toString('ascii', 4).replace(/\0+$/, '')).toMatch(
      /^iqn\.2025-01\.io\.vtl\.test:backup-a,i,0x[0-9a-f]{12}$/,
    );
    const second = full.subarray(8 + 24 + idLength);
    expect(second.readBigUInt64BE(0)).toBe(KEY_B);
    expect(second[12]).toBe(0);

    // Host A stops answering: B takes the drive over with Write Exclusive.
    expect(
      (await prOut(b, DRIVE, PrOut.PREEMPT_AND_ABORT, KEY_B, KEY_A, PrType.WRITE_EXCLUSIVE)).status,
    ).toBe(0);
    const told = await a.exec(DRIVE, Cdb.tur());
    expect(told.sense).toMatchObject({ key: 0x6, asc: 0x2a, ascq: 0x05 });
    expect((await a.exec(DRIVE, Cdb.readPosition(), { allocation: 20 })).status).toBe(0);
    expect((await a.exec(DRIVE, Cdb.write6(512), { dataOut: Buffer.alloc(512) })).status).toBe(CONFLICT);
    expect((await a.exec(DRIVE, Cdb.writeFilemarks(1))).status).toBe(CONFLICT);
    expect(keysOf(await prIn(a, DRIVE, PrIn.READ_KEYS))).toEqual([KEY_B]);
    // A's old key no longer counts.
    expect((await prOut(a, DRIVE, PrOut.RESERVE, KEY_A, 0n, PrType.WRITE_EXCLUSIVE)).status).toBe(CONFLICT);
  });

  it('keeps registrations and the reservation when the holder logs out, until another registrant clears them', async () => {
    const [a, b] = await twoHosts();
    await prOut(a, DRIVE, PrOut.REGISTER, 0n, KEY_A);
    await prOut(a, DRIVE, PrOut.RESERVE, KEY_A, 0n, PrType.EXCLUSIVE_ACCESS);
    await a.close();
    expect(reservationOf(await prIn(b, DRIVE, PrIn.READ_RESERVATION))?.key).toBe(KEY_A);
    expect((await b.exec(DRIVE, Cdb.tur())).status).toBe(CONFLICT);
    // A fresh registrant (whatever key it had) clears everything.
    expect((await prOut(b, DRIVE, PrOut.REGISTER_AND_IGNORE_EXISTING_KEY, 0x1234n, KEY_B)).status).toBe(0);
    expect((await prOut(b, DRIVE, PrOut.CLEAR, KEY_B)).status).toBe(0);
    expect(reservationOf(await prIn(b, DRIVE, PrIn.READ_RESERVATION))).toBeUndefined();
    expect(keysOf(await prIn(b, DRIVE, PrIn.READ_KEYS))).toEqual([]);
    expect((await b.exec(DRIVE, Cdb.tur())).status).toBe(0);
  });

  it('refuses bad parameters with ILLEGAL REQUEST and changes nothing', async () => {
    const [a] = await twoHosts();
    await prOut(a, DRIVE, PrOut.REGISTER, 0n, KEY_A);
    const generation = (await prIn(a, DRIVE, PrIn.READ_KEYS)).readUInt32BE(0);
    const refusals: Array<[string, Promise<{ sense?: unknown }>, object]> = [
      [
        'short parameter list',
        a.exec(DRIVE, Cdb.persistentReserveOut(PrOut.REGISTER, 0, 20), {
          dataOut: Cdb.prOutParameters(KEY_A, 0x77n).subarray(0, 20),
        }),
        { key: 0x5, asc: 0x1a, ascq: 0 },
      ],
      [
        'APTPL',
        a.exec(DRIVE, Cdb.persistentReserveOut(PrOut.REGISTER), {
          dataOut: Cdb.prOutParameters(KEY_A, 0x77n, 0x01),
        }),
        { key: 0x5, asc: 0x26, ascq: 0, fieldPointer: { inCdb: false, byte: 20, bit: 0 } },
      ],
      [
        'ALL_TG_PT',
        a.exec(DRIVE, Cdb.persistentReserveOut(PrOut.REGISTER), {
          dataOut: Cdb.prOutParameters(KEY_A, 0x77n, 0x04),
        }),
        { key: 0x5, asc: 0x26, ascq: 0, fieldPointer: { inCdb: false, byte: 20, bit: 2 } },
      ],
      [
        'obsolete type 2',
        prOut(a, DRIVE, PrOut.RESERVE, KEY_A, 0n, 2),
        { key: 0x5, asc: 0x24, fieldPointer: { inCdb: true, byte: 2 } },
      ],
      [
        'element scope',
        prOut(a, DRIVE, PrOut.RESERVE, KEY_A, 0n, 0x20 | PrType.EXCLUSIVE_ACCESS),
        { key: 0x5, asc: 0x24, fieldPointer: { inCdb: true, byte: 2 } },
      ],
      ['REGISTER AND MOVE', prOut(a, DRIVE, 0x07, KEY_A, 0x77n), { key: 0x5, asc: 0x24 }],
      [
        'unknown PERSISTENT RESERVE IN action',
        a.exec(DRIVE, Cdb.persistentReserveIn(0x04), { allocation: 64 }),
        { key: 0x5, asc: 0x24 },
      ],
    ];
    for (const [what, pending, sense] of refusals) {
      const r = await pending;
      expect(r.sense, what).toMatchObject(sense);
    }
    const after = await prIn(a, DRIVE, PrIn.READ_KEYS);
    expect(after.readUInt32BE(0)).toBe(generation);
    expect(keysOf(after)).toEqual([KEY_A]);
    expect(reservationOf(await prIn(a, DRIVE, PrIn.READ_RESERVATION))).toBeUndefined();
  });

  it('conflicts with a RESERVE(6) another host holds, and the changer keeps its own reservations', async () => {
    const [a, b] = await twoHosts();
    expect((await a.exec(DRIVE, Cdb.reserve6())).status).toBe(0);
    expect((await b.exec(DRIVE, Cdb.persistentReserveIn(PrIn.READ_KEYS), { allocation: 64 })).status).toBe(
      CONFLICT,
    );
    expect((await prOut(b, DRIVE, PrOut.REGISTER, 0n, KEY_B)).status).toBe(CONFLICT);
    expect((await a.exec(DRIVE, Cdb.release6())).status).toBe(0);

    // Write Exclusive on the changer: the other host still reads the inventory but moves nothing.
    await prOut(a, CHANGER, PrOut.REGISTER, 0n, KEY_A);
    await prOut(a, CHANGER, PrOut.RESERVE, KEY_A, 0n, PrType.WRITE_EXCLUSIVE);
    const inventory = await b.exec(CHANGER, Cdb.readElementStatus(0, 0, 100, { alloc: 4096 }), {
      allocation: 4096,
    });
    expect(inventory.status).toBe(0);
    expect((await b.exec(CHANGER, Cdb.moveMedium(0x1001, 0x1002))).status).toBe(CONFLICT);
    expect((await b.exec(CHANGER, Cdb.initializeElementStatus())).status).toBe(CONFLICT);
    // The drive has no reservation of its own.
    expect((await b.exec(DRIVE, Cdb.tur())).status).toBe(0);
  });
});
