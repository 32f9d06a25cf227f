import { afterEach, describe, expect, it } from 'vitest';
import { lentAlignedSlots } from '../../media/aligned-buffers.js';
import { parseSense } from '../../scsi/sense.js';
import { checkCondition } from '../../scsi/result.js';
import { decodeLun } from '../../scsi/lun.js';
import { Op, opcodeOf } from './pdu.js';
import { RawInitiator, type RawLoginOptions } from './testing/raw-initiator.js';
import { TEST_INITIATOR, TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';
import type { KeyValue } from './text-keys.js';

let t: TestTarget | undefined;
const clients: RawInitiator[] = [];

async function loggedIn(keys: KeyValue[] = [], opts: Partial<RawLoginOptions> = {}): Promise<RawInitiator> {
  const c = await RawInitiator.connect(t!.target.port);
  clients.push(c);
  const result = await c.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET, keys, ...opts });
  expect(result.status).toBe(0);
  return c;
}

/** Clears the power-on unit attention every new nexus starts with. */
async function clearUnitAttention(c: RawInitiator, lun = 0): Promise<void> {
  const first = await c.collect(c.command({ lun, cdb: [0, 0, 0, 0, 0, 0] }));
  expect(parseSense(first.sense!)).toMatchObject({ key: 6, asc: 0x29, ascq: 0 });
}

const KiB256 = 256 * 1024;

/**
 * A target and a session with Linux's initiator's write settings: 256 KiB of immediate data as
 * the first burst, the rest on R2Ts of `maxBurst` bytes, one at a time.
 */
async function burstSession(maxBurst: number): Promise<RawInitiator> {
  t = await startTestTarget({
    limits: {
      maxRecvDataSegmentLength: KiB256,
      firstBurstLength: KiB256,
      maxBurstLength: maxBurst,
      maxOutstandingR2T: 1,
    },
  });
  const c = await loggedIn([
    ['InitialR2T', 'No'],
    ['ImmediateData', 'Yes'],
    ['MaxRecvDataSegmentLength', String(KiB256)],
    ['FirstBurstLength', String(KiB256)],
    ['MaxBurstLength', String(maxBurst)],
  ]);
  await clearUnitAttention(c);
  return c;
}

const read10 = (lba: number, blocks: number) => [
  0x28,
  0,
  ...u32(lba),
  0,
  (blocks >> 8) & 0xff,
  blocks & 0xff,
  0,
];
const write10 = (lba: number, blocks: number) => [
  0x2a,
  0,
  ...u32(lba),
  0,
  (blocks >> 8) & 0xff,
  blocks & 0xff,
  0,
];
function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t?.target.stop();
  t = undefined;
});

describe('iSCSI full feature phase', () => {
  it('answers an unknown opcode with CHECK CONDITION, ILLEGAL REQUEST, 20/00', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    await clearUnitAttention(c);
    const r = await c.collect(c.command({ cdb: [0xee, 0, 0, 0, 0, 0] }));
    expect(r.status).toBe(2);
    expect(parseSense(r.sense!)).toMatchObject({ key: 5, asc: 0x20, ascq: 0 });
  });

  it('moves a write through immediate data, an unsolicited burst and R2Ts, with data digests', async () => {
    t = await startTestTarget({
      limits: {
        maxRecvDataSegmentLength: 4096,
        firstBurstLength: 8192,
        maxBurstLength: 16384,
        maxOutstandingR2T: 2,
      },
    });
    const c = await loggedIn([
      ['DataDigest', 'CRC32C'],
      ['HeaderDigest', 'CRC32C'],
      ['InitialR2T', 'No'],
      ['ImmediateData', 'Yes'],
      ['MaxOutstandingR2T', '2'],
      ['MaxRecvDataSegmentLength', '3000'],
    ]);
    await clearUnitAttention(c);
    const payload = Buffer.from(Array.from({ length: 100 * 512 }, (_, i) => (i * 31 + 7) & 0xff));
    const itt = c.command({
      cdb: write10(10, 100),
      write: true,
      edtl: payload.length,
      data: payload.subarray(0, 4096),
      final: false,
    });
    c.dataOut({
      itt,
      ttt: 0xffffffff,
      offset: 4096,
      dataSn: 0,
      final: true,
      data: payload.subarray(4096, 8192),
    });
    let received = 8192;
    const bursts: Array<[number, number]> = [];
    while (received < payload.length) {
      const pdu = await c.next();
      expect(opcodeOf(pdu.bhs)).toBe(Op.R2T);
      const [ttt, offset, length] = [
        pdu.bhs.readUInt32BE(20),
        pdu.bhs.readUInt32BE(40),
        pdu.bhs.readUInt32BE(44),
      ];
      bursts.push([offset, length]);
      for (let o = 0, sn = 0; o < length; o += 4096, sn++) {
        const n = Math.min(4096, length - o);
        c.dataOut({
          itt,
          ttt,
          offset: offset + o,
          dataSn: sn,
          final: o + n === length,
          data: payload.subarray(offset + o, offset + o + n),
        });
      }
      received += length;
    }
    expect(bursts[0]).toEqual([8192, 16384]);
    expect(bursts.every(([, len]) => len <= 16384)).toBe(true);
    expect((await c.collect(itt)).status).toBe(0);
    expect(t!.disk.storage.subarray(10 * 512, 110 * 512).equals(payload)).toBe(true);

    const read = await c.collect(c.command({ cdb: read10(10, 100), read: true, edtl: payload.length }));
    expect(read.status).toBe(0);
    expect(read.data.equals(payload)).toBe(true);
    // Segments follow the initiator's MaxRecvDataSegmentLength; F closes each MaxBurstLength sequence.
    expect(Math.max(...read.pdus.map((p) => p.data.length))).toBe(3000);
    const last = read.pdus.at(-1)!;
    expect(last.bhs[1]! & 0x81).toBe(0x81);
    expect(read.pdus.map((p) => p.bhs.readUInt32BE(36))).toEqual(read.pdus.map((_, i) => i));
  });

  it('lands large write bursts in the task buffer in place, byte for byte, and gives every slot back', async () => {
    const c = await burstSession(KiB256);
    const slotsBefore = lentAlignedSlots();
    for (let round = 0; round < 3; round++) {
      // 1 MiB as the Linux initiators send it: a first burst of immediate data, then R2Ts.
      const payload = Buffer.from(Array.from({ length: 4 * KiB256 }, (_, i) => (i * 13 + round) & 0xff));
      const lba = 100 + round * 2048;
      const itt = c.command({
        cdb: write10(lba, 2048),
        write: true,
        edtl: payload.length,
        data: payload.subarray(0, KiB256),
        final: true,
      });
      for (let received = KiB256; received < payload.length;) {
        const pdu = await c.next();
        expect(opcodeOf(pdu.bhs)).toBe(Op.R2T);
        const [ttt, offset, length] = [
          pdu.bhs.readUInt32BE(20),
          pdu.bhs.readUInt32BE(40),
          pdu.bhs.readUInt32BE(44),
        ];
        c.dataOut({
          itt,
          ttt,
          offset,
          dataSn: 0,
          final: true,
          data: payload.subarray(offset, offset + length),
        });
        received += length;
      }
      expect((await c.collect(itt)).status).toBe(0);
      expect(t!.disk.storage.subarray(lba * 512, lba * 512 + payload.length).equals(payload)).toBe(true);
    }
    expect(lentAlignedSlots()).toBe(slotsBefore);
  });

  it('runs large writes in CmdSN order when the later one arrives first, byte for byte', async () => {
    const c = await burstSession(4 * KiB256);
    const slotsBefore = lentAlignedSlots();
    const payloads = [1, 2].map((k) =>
      Buffer.from(Array.from({ length: 4 * KiB256 }, (_, i) => (i * k + 3) & 0xff)),
    );
    const write = (k: number, cmdSn: number) =>
      c.commandPdu({
        cdb: write10(4096 + k * 2048, 2048),
        write: true,
        edtl: 4 * KiB256,
        data: payloads[k]!.subarray(0, KiB256),
        cmdSn,
      });
    const first = write(0, c.cmdSn);
    const second = write(1, c.cmdSn + 1);
    c.cmdSn += 2;
    // The second write, whole, then the first in two pieces: the first runs first all the same.
    c.socket.write(second.pdu);
    c.socket.write(first.pdu.subarray(0, 48 + 1000));
    await expect(c.next(200)).rejects.toThrow(/timed out/);
    c.socket.write(first.pdu.subarray(48 + 1000));
    // Both R2Ts, the first write's first: the second was queued behind it in CmdSN order.
    const itts = [first.itt, second.itt];
    const r2ts = [await c.next(), await c.next()];
    expect(r2ts.map((p) => [opcodeOf(p.bhs), p.bhs.readUInt32BE(16), p.bhs.readUInt32BE(40)])).toEqual(
      itts.map((itt) => [Op.R2T, itt, KiB256]),
    );
    for (const [k, itt] of itts.entries()) {
      const ttt = r2ts[k]!.bhs.readUInt32BE(20);
      for (let dataSn = 0; dataSn < 3; dataSn++) {
        const offset = KiB256 * (dataSn + 1);
        const data = payloads[k]!.subarray(offset, offset + KiB256);
        c.dataOut({ itt, ttt, offset, dataSn, final: dataSn === 2, data });
      }
      expect((await c.collect(itt)).status).toBe(0);
      const lba = 4096 + k * 2048;
      expect(t!.disk.storage.subarray(lba * 512, lba * 512 + 4 * KiB256).equals(payloads[k]!)).toBe(true);
    }
    expect(lentAlignedSlots()).toBe(slotsBefore);
  });

  it('gives back the immediate data of writes dropped outside the CmdSN window or left waiting when the connection drops', async () => {
    const c = await burstSession(KiB256);
    const slotsBefore = lentAlignedSlots();
    const write = (cmdSn: number) =>
      c.commandPdu({
        cdb: write10(8192, 512),
        write: true,
        edtl: KiB256,
        data: Buffer.alloc(KiB256, 5),
        cmdSn,
      });
    // A stale CmdSN (already used) is dropped silently: no response, no task, the slot back.
    const stale = write(c.cmdSn - 1);
    c.socket.write(stale.pdu);
    await expect(c.next(200)).rejects.toThrow(/timed out/);
    expect(t!.target.sessions()[0]!.outstandingTasks).toBe(0);
    expect(lentAlignedSlots()).toBe(slotsBefore);
    // One ahead of a gap waits for it; the connection closes first: its slot comes back too.
    const ahead = write(c.cmdSn + 1);
    c.socket.write(ahead.pdu);
    await expect.poll(() => lentAlignedSlots()).toBe(slotsBefore + 1);
    c.socket.destroy();
    await expect.poll(() => t!.target.sessions().length).toBe(0);
    expect(lentAlignedSlots()).toBe(slotsBefore);
    expect(t!.disk.storage.subarray(8192 * 512, 8192 * 512 + KiB256).includes(5)).toBe(false);
  });

  it('gives back the buffer of a write whose immediate data is cut off by the connection dropping', async () => {
    const c = await burstSession(KiB256);
    const slotsBefore = lentAlignedSlots();
    const { pdu } = c.commandPdu({
      cdb: write10(8192, 512),
      write: true,
      edtl: KiB256,
      data: Buffer.alloc(KiB256, 9),
    });
    // The header and half the data: the task is taken and its buffer lent, then the host is gone.
    c.socket.write(pdu.subarray(0, 48 + KiB256 / 2));
    await expect.poll(() => t!.target.sessions()[0]?.outstandingTasks).toBe(1);
    c.socket.destroy();
    await expect.poll(() => t!.target.sessions().length).toBe(0);
    expect(lentAlignedSlots()).toBe(slotsBefore);
  });

  it('tells onTransfer, per LUN, the data-out bytes a command received and the data-in bytes it sent', async () => {
    const moved: Array<[number, { read: number; written: number }]> = [];
    t = await startTestTarget({ onTransfer: (lun, bytes) => moved.push([lun, bytes]) });
    const c = await loggedIn([['ImmediateData', 'Yes']]);
    await clearUnitAttention(c);
    await clearUnitAttention(c, 1);
    moved.length = 0;
    const payload = Buffer.alloc(4 * 512, 0x5a);
    const write = c.command({ cdb: write10(0, 4), write: true, edtl: payload.length, data: payload });
    expect((await c.collect(write)).status).toBe(0);
    // The initiator allows 4096 bytes, the disk sends the 3 blocks asked for.
    const read = await c.collect(c.command({ cdb: read10(0, 3), read: true, edtl: 4096 }));
    expect(read.data.length).toBe(3 * 512);
    expect(
      (await c.collect(c.command({ lun: 1, cdb: [0x12, 0, 0, 0, 36, 0], read: true, edtl: 36 }))).status,
    ).toBe(0);
    expect(moved).toEqual([
      [0, { read: 0, written: 2048 }],
      [0, { read: 1536, written: 0 }],
      [1, { read: 36, written: 0 }],
    ]);
  });

  it('reports underflow and overflow residuals', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    await clearUnitAttention(c);
    const under = await c.collect(c.command({ cdb: read10(0, 1), read: true, edtl: 1024 }));
    const underBhs = under.pdus.at(-1)!.bhs;
    expect(underBhs[1]! & 0x06).toBe(0x02);
    expect(underBhs.readUInt32BE(44)).toBe(512);
    const over = await c.collect(c.command({ cdb: [0x12, 0, 0, 0, 96, 0], read: true, edtl: 36 }));
    expect(over.data.length).toBe(36);
    const overBhs = over.pdus.at(-1)!.bhs;
    expect(overBhs[1]! & 0x06).toBe(0x04);
    expect(overBhs.readUInt32BE(44)).toBe(60);
  });

  it('sends data-in and then a SCSI Response when a read ends in CHECK CONDITION (tape ILI)', async () => {
    t = await startTestTarget();
    t.changer.table.set(0xc2, {
      name: 'SHORT READ (test)',
      cdbLength: 6,
      handler: () =>
        checkCondition({ key: 0, asc: 0, ascq: 0, ili: true, information: 412 }, Buffer.alloc(100, 9)),
    });
    const c = await loggedIn();
    await clearUnitAttention(c, 1);
    const r = await c.collect(c.command({ lun: 1, cdb: [0xc2, 0, 0, 0, 0, 0], read: true, edtl: 512 }));
    expect(r.data).toEqual(Buffer.alloc(100, 9));
    const [dataIn, response] = r.pdus;
    expect(opcodeOf(dataIn!.bhs)).toBe(Op.DATA_IN);
    expect(dataIn!.bhs[1]! & 0x01).toBe(0);
    expect(opcodeOf(response!.bhs)).toBe(Op.SCSI_RESPONSE);
    expect(response!.bhs[1]! & 0x06).toBe(0x02);
    expect(response!.bhs.readUInt32BE(44)).toBe(412);
    expect(response!.bhs.readUInt32BE(36)).toBe(1);
    expect(parseSense(r.sense!)).toMatchObject({ ili: true, information: 412 });
  });

  it('routes REPORT LUNS and unmapped LUNs at target level, honouring the LUN subset', async () => {
    t = await startTestTarget({ authorize: () => new Set([1]) });
    const c = await loggedIn();
    const luns = await c.collect(
      c.command({ lun: 5, cdb: [0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], read: true, edtl: 256 }),
    );
    expect(luns.status).toBe(0);
    expect(luns.data.readUInt32BE(0)).toBe(8);
    expect(decodeLun(luns.data, 8)).toBe(1);
    const absent = await c.collect(c.command({ lun: 0, cdb: [0x12, 0, 0, 0, 36, 0], read: true, edtl: 36 }));
    expect(absent.data[0]).toBe(0x7f);
    const tur = await c.collect(c.command({ lun: 0, cdb: [0, 0, 0, 0, 0, 0] }));
    expect(parseSense(tur.sense!)).toMatchObject({ key: 5, asc: 0x25 });
  });

  it('echoes NOP-Out pings and keeps StatSN and ExpCmdSN moving', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.NOP_OUT | 0x40;
    bhs[1] = 0x80;
    bhs.writeUInt32BE(0x55, 16);
    bhs.writeUInt32BE(0xffffffff, 20);
    bhs.writeUInt32BE(c.cmdSn, 24);
    c.send(bhs, Buffer.from('ping!'));
    const reply = await c.next();
    expect(opcodeOf(reply.bhs)).toBe(Op.NOP_IN);
    expect(reply.bhs.readUInt32BE(16)).toBe(0x55);
    expect(reply.data.toString()).toBe('ping!');
    const expCmdSn = reply.bhs.readUInt32BE(28);
    expect(expCmdSn).toBe(c.cmdSn);
    expect(reply.bhs.readUInt32BE(32)).toBe(expCmdSn + 63);
    const tur = await c.collect(c.command({ cdb: [0, 0, 0, 0, 0, 0] }));
    const resp = tur.pdus[0]!.bhs;
    expect(resp.readUInt32BE(24)).toBe(reply.bhs.readUInt32BE(24) + 1);
    expect(resp.readUInt32BE(28)).toBe(expCmdSn + 1);
  });

  it('holds commands ahead of ExpCmdSN until the gap fills and drops stale ones', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    await clearUnitAttention(c);
    const base = c.cmdSn;
    const later = c.command({ cdb: [0, 0, 0, 0, 0, 0], cmdSn: base + 1 });
    const stale = c.command({ cdb: [0, 0, 0, 0, 0, 0], cmdSn: base - 1 });
    const first = c.command({ cdb: [0, 0, 0, 0, 0, 0], cmdSn: base });
    c.cmdSn = base + 2;
    const order = [await c.next(), await c.next()].map((p) => p.bhs.readUInt32BE(16));
    expect(order).toEqual([first, later]);
    await expect(c.next(300)).rejects.toThrow(/timed out/);
    expect(stale).toBeGreaterThan(0);
  });

  it('rejects PDUs it does not support, with the offending header', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    const bhs = Buffer.alloc(48);
    bhs[0] = 0x1c;
    bhs.writeUInt32BE(0x99, 16);
    c.send(bhs);
    const reject = await c.next();
    expect(opcodeOf(reject.bhs)).toBe(Op.REJECT);
    expect(reject.bhs[2]).toBe(0x05);
    expect(reject.data.readUInt32BE(16)).toBe(0x99);
    const snack = Buffer.alloc(48);
    snack[0] = Op.SNACK_REQUEST;
    c.send(snack);
    expect((await c.next()).bhs[2]).toBe(0x04);
  });

  it('drops the connection on a header digest error', async () => {
    t = await startTestTarget();
    const c = await loggedIn([['HeaderDigest', 'CRC32C']]);
    c.headerDigest = false;
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.NOP_OUT | 0x40;
    c.socket.write(Buffer.concat([bhs, Buffer.from([1, 2, 3, 4])]));
    await c.closedByTarget();
  });

  it('logs out and forgets the session; lists concurrent sessions', async () => {
    t = await startTestTarget();
    const a = await loggedIn();
    await loggedIn([], { isid: Buffer.from([0x80, 0, 0, 0, 0, 2]) });
    expect(t.target.sessions()).toHaveLength(2);
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.LOGOUT_REQUEST | 0x40;
    bhs[1] = 0x80;
    bhs.writeUInt32BE(0x42, 16);
    bhs.writeUInt32BE(a.cmdSn, 24);
    a.send(bhs);
    const reply = await a.next();
    expect(opcodeOf(reply.bhs)).toBe(Op.LOGOUT_RESPONSE);
    expect(reply.bhs[2]).toBe(0);
    await a.closedByTarget();
    await expect.poll(() => t!.target.sessions().length).toBe(1);
  });

  it('reinstates a session logged in again with the same ISID', async () => {
    t = await startTestTarget();
    const old = await loggedIn();
    await loggedIn();
    await old.closedByTarget();
    await expect.poll(() => t!.target.sessions().length).toBe(1);
  });

  it('pings idle initiators and drops the ones that never answer', async () => {
    t = await startTestTarget({ nopInIntervalMs: 100 });
    const c = await loggedIn();
    const ping = await c.next();
    expect(opcodeOf(ping.bhs)).toBe(Op.NOP_IN);
    expect(ping.bhs.readUInt32BE(16)).toBe(0xffffffff);
    const answer = Buffer.alloc(48);
    answer[0] = Op.NOP_OUT | 0x40;
    answer[1] = 0x80;
    answer.writeUInt32BE(0xffffffff, 16);
    answer.writeUInt32BE(ping.bhs.readUInt32BE(20), 20);
    answer.writeUInt32BE(c.cmdSn, 24);
    c.send(answer);
    // Answered: the next interval pings again instead of dropping the connection.
    const second = await c.next();
    expect(second.bhs.readUInt32BE(20)).not.toBe(ping.bhs.readUInt32BE(20));
    await c.closedByTarget(2000);
  });

  it('rejects a data-out with a bad data digest and fails its command', async () => {
    t = await startTestTarget();
    const c = await loggedIn([
      ['DataDigest', 'CRC32C'],
      ['InitialR2T', 'Yes'],
    ]);
    await clearUnitAttention(c);
    const itt = c.command({ cdb: write10(0, 1), write: true, edtl: 512 });
    const r2t = await c.next();
    expect(opcodeOf(r2t.bhs)).toBe(Op.R2T);
    c.dataDigest = false;
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.DATA_OUT;
    bhs[1] = 0x80;
    bhs.writeUInt32BE(itt, 16);
    bhs.writeUInt32BE(r2t.bhs.readUInt32BE(20), 20);
    c.send(bhs, Buffer.alloc(512, 1));
    c.socket.write(Buffer.from([0xde, 0xad, 0xbe, 0xef]));
    const reject = await c.next();
    expect(opcodeOf(reject.bhs)).toBe(Op.REJECT);
    expect(reject.bhs[2]).toBe(0x02);
    const failed = await c.collect(itt);
    expect(parseSense(failed.sense!)).toMatchObject({ key: 0x0b, asc: 0x47, ascq: 0x05 });
    expect(t!.disk.storage.subarray(0, 512).every((b) => b === 0)).toBe(true);
  });
});
