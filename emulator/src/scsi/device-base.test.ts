import { describe, expect, it } from 'vitest';
import { Asc, PeripheralType, ScsiStatus } from './constants.js';
import { ScsiDeviceBase } from './device-base.js';
import { parseSense, Sense, ScsiError } from './sense.js';
import type { ScsiCommand } from './types.js';

const A = 'iqn.2024-01.test:a,i,0x800000000001';
const B = 'iqn.2024-01.test:b,i,0x800000000001';

function device(): ScsiDeviceBase {
  return new ScsiDeviceBase(PeripheralType.SEQUENTIAL_ACCESS, {
    vendor: 'IBM',
    product: 'ULT3580-TD8',
    revision: 'Q3F4',
    serial: '1013000123',
    naa: '5000e11100000123',
    removable: true,
    versionDescriptors: [0x0600],
  });
}

function cmd(initiator: string, cdb: number[], extra: Partial<ScsiCommand> = {}): ScsiCommand {
  return {
    cdb: Buffer.from([...cdb, ...Array(16 - cdb.length).fill(0)]),
    expectedDataInLength: 255,
    initiator,
    lun: 0,
    ...extra,
  };
}

/** Sends TEST UNIT READY once to consume the power-on unit attention. */
async function attach(d: ScsiDeviceBase, nexus: string): Promise<void> {
  const r = await d.execute(cmd(nexus, [0, 0, 0, 0, 0, 0]));
  expect(parseSense(r.sense!)).toMatchObject({ key: 6, asc: 0x29, ascq: 0 });
}

describe('ScsiDeviceBase (SPC)', () => {
  it('answers standard INQUIRY from the identity, trimmed to the allocation length', async () => {
    const d = device();
    const r = await d.execute(cmd(A, [0x12, 0, 0, 0, 96, 0]));
    const data = r.dataIn!;
    expect(data.length).toBe(96);
    expect(data[0]).toBe(PeripheralType.SEQUENTIAL_ACCESS);
    expect(data[1]).toBe(0x80);
    expect(data.toString('ascii', 8, 36)).toBe('IBM     ULT3580-TD8     Q3F4');
    expect(data.readUInt16BE(58)).toBe(0x0600);
    expect((await d.execute(cmd(A, [0x12, 0, 0, 0, 5, 0]))).dataIn!.length).toBe(5);
  });

  it('answers VPD pages 00, 80 and 83 and refuses others with a field pointer', async () => {
    const d = device();
    expect([...(await d.execute(cmd(A, [0x12, 1, 0x00, 0, 255, 0]))).dataIn!]).toEqual([
      1, 0, 0, 3, 0, 0x80, 0x83,
    ]);
    expect((await d.execute(cmd(A, [0x12, 1, 0x80, 0, 255, 0]))).dataIn!.subarray(4).toString()).toBe(
      '1013000123',
    );
    const ids = (await d.execute(cmd(A, [0x12, 1, 0x83, 0, 255, 0]))).dataIn!;
    expect(ids.subarray(4, 8)).toEqual(Buffer.from([0x01, 0x03, 0x00, 0x08]));
    expect(ids.subarray(8, 16).toString('hex')).toBe('5000e11100000123');
    expect(ids.subarray(16).toString('ascii', 4)).toBe('IBM     ULT3580-TD8     1013000123');
    const bad = await d.execute(cmd(A, [0x12, 1, 0xb5, 0, 255, 0]));
    expect(parseSense(bad.sense!)).toMatchObject({
      key: 5,
      asc: 0x24,
      fieldPointer: { inCdb: true, byte: 2, bit: 7 },
    });
    const noEvpd = await d.execute(cmd(A, [0x12, 0, 0x80, 0, 255, 0]));
    expect(parseSense(noEvpd.sense!).fieldPointer).toEqual({ inCdb: true, byte: 2, bit: 7 });
  });

  it('queues unit attentions per nexus and lets INQUIRY through', async () => {
    const d = device();
    expect((await d.execute(cmd(A, [0x12, 0, 0, 0, 36, 0]))).status).toBe(ScsiStatus.GOOD);
    await attach(d, A);
    await attach(d, B);
    d.raiseUnitAttention(Asc.NOT_READY_TO_READY_CHANGE);
    d.raiseUnitAttention(Asc.NOT_READY_TO_READY_CHANGE);
    d.raiseUnitAttention(Asc.MODE_PARAMETERS_CHANGED, { only: B });
    expect(parseSense((await d.execute(cmd(A, [0, 0, 0, 0, 0, 0]))).sense!)).toMatchObject({
      key: 6,
      asc: 0x28,
    });
    expect((await d.execute(cmd(A, [0, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.GOOD);
    // Even an unknown opcode reports the pending condition first.
    expect(parseSense((await d.execute(cmd(B, [0xee, 0, 0, 0, 0, 0]))).sense!)).toMatchObject({
      key: 6,
      asc: 0x28,
    });
    // REQUEST SENSE first returns the sense of the last CHECK CONDITION, then the next condition.
    const pending = await d.execute(cmd(B, [0x03, 0, 0, 0, 18, 0]));
    expect(parseSense(pending.dataIn!)).toMatchObject({ key: 6, asc: 0x28 });
    const rs = await d.execute(cmd(B, [0x03, 0, 0, 0, 18, 0]));
    expect(rs.status).toBe(ScsiStatus.GOOD);
    expect(parseSense(rs.dataIn!)).toMatchObject({ key: 6, asc: 0x2a, ascq: 0x01 });
    expect(parseSense((await d.execute(cmd(B, [0xee, 0, 0, 0, 0, 0]))).sense!)).toMatchObject({
      key: 5,
      asc: 0x20,
    });
  });

  it('returns the last sense once through REQUEST SENSE, then NO SENSE', async () => {
    const d = device();
    await attach(d, A);
    await d.execute(cmd(A, [0xee, 0, 0, 0, 0, 0]));
    expect(parseSense((await d.execute(cmd(A, [0x03, 0, 0, 0, 18, 0]))).dataIn!)).toMatchObject({
      key: 5,
      asc: 0x20,
    });
    expect(parseSense((await d.execute(cmd(A, [0x03, 0, 0, 0, 18, 0]))).dataIn!)).toMatchObject({
      key: 0,
      asc: 0,
    });
    const desc = await d.execute(cmd(A, [0x03, 1, 0, 0, 18, 0]));
    expect(parseSense(desc.sense!).fieldPointer).toEqual({ inCdb: true, byte: 1, bit: 0 });
  });

  it('enforces RESERVE(6) between nexuses and clears it on nexus loss', async () => {
    const d = device();
    await attach(d, A);
    await attach(d, B);
    expect((await d.execute(cmd(A, [0x16, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.GOOD);
    expect((await d.execute(cmd(B, [0, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.RESERVATION_CONFLICT);
    expect((await d.execute(cmd(B, [0x16, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.RESERVATION_CONFLICT);
    expect((await d.execute(cmd(B, [0x12, 0, 0, 0, 36, 0]))).status).toBe(ScsiStatus.GOOD);
    expect((await d.execute(cmd(B, [0x17, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.GOOD);
    expect((await d.execute(cmd(B, [0, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.RESERVATION_CONFLICT);
    d.notify({ kind: 'nexus-loss', nexus: A });
    expect((await d.execute(cmd(B, [0, 0, 0, 0, 0, 0]))).status).toBe(ScsiStatus.GOOD);
    const thirdParty = await d.execute(cmd(B, [0x16, 0x10, 0, 0, 0, 0]));
    expect(parseSense(thirdParty.sense!).fieldPointer).toEqual({ inCdb: true, byte: 1, bit: 4 });
  });

  it('lists its table in REPORT SUPPORTED OPERATION CODES, with timeouts when asked', async () => {
    const d = device();
    await attach(d, A);
    d.table.set(0x01, {
      name: 'REWIND',
      handler: () => ({ status: 0 }),
      timeouts: { nominal: 60, recommended: 600 },
    });
    const all = (await d.execute(cmd(A, [0xa3, 0x0c, 0x00, 0, 0, 0, 0, 0, 4, 0, 0, 0]))).dataIn!;
    const count = all.readUInt32BE(0) / 8;
    const opcodes = Array.from({ length: count }, (_, i) => all[4 + 8 * i]);
    const persistentReserve = [...Array<number>(4).fill(0x5e), ...Array<number>(7).fill(0x5f)];
    expect(opcodes).toEqual([
      0x00,
      0x01,
      0x03,
      0x12,
      0x16,
      0x17,
      0x56,
      0x57,
      ...persistentReserve,
      0xa0,
      0xa3,
    ]);
    const one = (await d.execute(cmd(A, [0xa3, 0x0c, 0x81, 0x01, 0, 0, 0, 0, 1, 0, 0, 0]))).dataIn!;
    expect(one[1]).toBe(0x83);
    expect(one.readUInt16BE(2)).toBe(6);
    expect(one.readUInt32BE(4 + 6 + 4)).toBe(60);
    expect(one.readUInt32BE(4 + 6 + 8)).toBe(600);
    expect((await d.execute(cmd(A, [0xa3, 0x0c, 0x01, 0xee, 0, 0, 0, 0, 1, 0, 0, 0]))).dataIn![1]).toBe(0x01);
  });

  it('turns handler errors into sense: ScsiError as raised, anything else as internal failure', async () => {
    const d = device();
    await attach(d, A);
    d.table.set(0x2b, {
      name: 'LOCATE',
      handler: () => {
        throw new ScsiError(Sense.invalidFieldInCdb(1, 2));
      },
    });
    d.table.set(0x11, {
      name: 'SPACE',
      handler: () => {
        throw new Error('bug');
      },
    });
    expect(
      parseSense((await d.execute(cmd(A, [0x2b, 4, 0, 0, 0, 0, 0, 0, 0, 0]))).sense!).fieldPointer,
    ).toEqual({ inCdb: true, byte: 1, bit: 2 });
    expect(parseSense((await d.execute(cmd(A, [0x11, 0, 0, 0, 0, 0]))).sense!)).toMatchObject({
      key: 4,
      asc: 0x44,
    });
    const naca = await d.execute(cmd(A, [0x00, 0, 0, 0, 0, 0x04]));
    expect(parseSense(naca.sense!).fieldPointer).toEqual({ inCdb: true, byte: 5, bit: 2 });
  });

  it('runs commands one at a time unless a row is concurrent', async () => {
    const d = device();
    await attach(d, A);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    d.table.set(0x01, {
      name: 'REWIND',
      handler: async () => {
        order.push('rewind start');
        await gate;
        order.push('rewind end');
        return { status: 0 };
      },
    });
    const rewind = d.execute(cmd(A, [0x01, 0, 0, 0, 0, 0]));
    const tur = d.execute(cmd(A, [0x00, 0, 0, 0, 0, 0])).then(() => order.push('tur'));
    const inquiry = d.execute(cmd(A, [0x12, 0, 0, 0, 36, 0])).then(() => order.push('inquiry'));
    await inquiry;
    release();
    await Promise.all([rewind, tur]);
    expect(order).toEqual(['rewind start', 'inquiry', 'rewind end', 'tur']);
  });

  it('drops a queued command that was aborted before its turn', async () => {
    const d = device();
    await attach(d, A);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let ran = 0;
    d.table.set(0x01, { name: 'REWIND', handler: async () => (await gate, { status: 0 }) });
    d.table.set(0x10, { name: 'WRITE FILEMARKS', handler: () => (ran++, { status: 0 }) });
    const busy = d.execute(cmd(A, [0x01, 0, 0, 0, 0, 0]));
    const abort = new AbortController();
    const queued = d.execute(cmd(A, [0x10, 0, 0, 0, 1, 0], { signal: abort.signal }));
    abort.abort();
    release();
    await busy;
    expect((await queued).status).toBe(ScsiStatus.TASK_ABORTED);
    expect(ran).toBe(0);
  });
});
