import { describe, expect, it } from 'vitest';
import { PeripheralType } from './constants.js';
import { ScsiDeviceBase } from './device-base.js';
import { decodeLun, encodeLun } from './lun.js';
import { executeRouted } from './lun-router.js';
import { parseSense } from './sense.js';
import type { ScsiCommand } from './types.js';

const dev = () =>
  new ScsiDeviceBase(PeripheralType.MEDIUM_CHANGER, {
    vendor: 'IBM',
    product: '03584L32',
    revision: '1',
    serial: 'X',
  });
const cmd = (lun: number, cdb: number[]): ScsiCommand => ({
  cdb: Buffer.from([...cdb, ...Array(16 - cdb.length).fill(0)]),
  expectedDataInLength: 512,
  initiator: 'iqn.x,i,0x1',
  lun,
});

describe('LUN routing', () => {
  const luns = new Map([
    [0, dev()],
    [3, dev()],
    [300, dev()],
  ]);

  it('answers REPORT LUNS from the map, whatever LUN it is sent to', async () => {
    const r = await executeRouted(luns, cmd(7, [0xa0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0]));
    const data = r.dataIn!;
    expect(data.readUInt32BE(0)).toBe(24);
    expect([8, 16, 24].map((o) => decodeLun(data, o))).toEqual([0, 3, 300]);
    expect(data.subarray(24, 26)).toEqual(Buffer.from([0x41, 0x2c]));
    const short = await executeRouted(luns, cmd(0, [0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0]));
    expect(parseSense(short.sense!).fieldPointer).toEqual({ inCdb: true, byte: 6 });
    const truncated = await executeRouted(luns, cmd(0, [0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0]));
    expect(truncated.dataIn!.length).toBe(16);
    expect(truncated.dataIn!.readUInt32BE(0)).toBe(24);
  });

  it('answers for unmapped LUNs as SPC requires', async () => {
    expect((await executeRouted(luns, cmd(9, [0x12, 0, 0, 0, 36, 0]))).dataIn![0]).toBe(0x7f);
    expect(parseSense((await executeRouted(luns, cmd(9, [0, 0, 0, 0, 0, 0]))).sense!)).toMatchObject({
      key: 5,
      asc: 0x25,
    });
    const rs = await executeRouted(luns, cmd(9, [0x03, 0, 0, 0, 18, 0]));
    expect(rs.status).toBe(0);
    expect(parseSense(rs.dataIn!).asc).toBe(0x25);
  });

  it('encodes LUNs with peripheral and flat addressing', () => {
    expect(encodeLun(5)).toEqual(Buffer.from([0, 5, 0, 0, 0, 0, 0, 0]));
    expect(encodeLun(0x1234)).toEqual(Buffer.from([0x52, 0x34, 0, 0, 0, 0, 0, 0]));
    expect(decodeLun(Buffer.from([0x01, 0x02, 0, 0, 0, 0, 0, 0]))).toBe(0x102);
  });
});
