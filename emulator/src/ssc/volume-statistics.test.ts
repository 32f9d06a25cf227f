import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, startWithCartridge, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const LABEL = 'VST001L8';
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);

/**
 * The parameters of page 17h that LTFS's cartridge health reads (mounts, data sets and errors of
 * the volume and of the previous mount, megabytes moved, medium passes). A missing one, or one
 * whose value is not 1, 2, 4 or 8 bytes, is "LTFS30235I Cannot parse the log page 0x17".
 */
const CART_HEALTH = [
  0x0001, 0x0002, 0x0003, 0x0004, 0x0007, 0x0008, 0x0009, 0x000c, 0x000d, 0x0010, 0x0011, 0x0101, 0x0102,
];
/** LTFS's LOG SENSE allocation: a page must fit in it whole. */
const LTFS_ALLOCATION = 1024;

interface LogParameter {
  control: number;
  value: Buffer;
}

/**
 * A log page as the reference lays it out: a 4-byte header (page code in bits 5-0 of byte 0,
 * PAGE LENGTH in bytes 2-3), then parameters of a 2-byte code, a control byte, a length byte and
 * the value. Throws on a parameter that runs past the page length.
 */
function parseLogPage(data: Buffer): { page: number; parameters: Map<number, LogParameter> } {
  const end = 4 + data.readUInt16BE(2);
  expect(end).toBeLessThanOrEqual(data.length);
  const parameters = new Map<number, LogParameter>();
  for (let at = 4; at < end;) {
    if (at + 4 > end) throw new Error(`parameter header at ${at} runs past the page`);
    const length = data[at + 3]!;
    if (at + 4 + length > end) throw new Error(`parameter ${data.readUInt16BE(at)} runs past the page`);
    parameters.set(data.readUInt16BE(at), {
      control: data[at + 2]!,
      value: data.subarray(at + 4, at + 4 + length),
    });
    at += 4 + length;
  }
  return { page: data[0]! & 0x3f, parameters };
}

/** A binary counter of 1, 2, 4 or 8 bytes, as LTFS reads one; anything else is refused. */
function counter(parameters: Map<number, LogParameter>, code: number): number {
  const p = parameters.get(code);
  if (!p) throw new Error(`parameter ${code.toString(16)}h is missing`);
  if (![1, 2, 4, 8].includes(p.value.length))
    throw new Error(`parameter ${code.toString(16)}h has ${p.value.length} bytes`);
  return Number(p.value.reduce((n, b) => n * 256n + BigInt(b), 0n));
}

/** Partition → MB of a list parameter (0202h-0204h): records of length, reserved, partition, value. */
function partitionList(parameters: Map<number, LogParameter>, code: number): number[] {
  const body = parameters.get(code)?.value ?? Buffer.alloc(0);
  const out: number[] = [];
  for (let r = 0; r < body.length; r += body[r]! + 1)
    out[body.readUInt16BE(r + 2)] = body.readUInt32BE(r + 4);
  return out;
}

async function volumeStatistics(h: ScsiHost) {
  const r = await h.exec(DRIVE, Cdb.logSense(0x17, LTFS_ALLOCATION), { allocation: LTFS_ALLOCATION });
  ok(r);
  expect(4 + r.data.readUInt16BE(2), 'the page fits in LTFS allocation').toBeLessThanOrEqual(LTFS_ALLOCATION);
  const parsed = parseLogPage(r.data);
  expect(parsed.page).toBe(0x17);
  return parsed.parameters;
}

async function loaded(): Promise<ScsiHost> {
  const { target, host } = await startWithCartridge(LABEL);
  t = target;
  return host;
}

describe('log page 17h (volume statistics)', () => {
  it('says the page is not valid without a cartridge', async () => {
    t = await startLibraryTarget([{ id: 1, generation: 8 }]);
    const h = await t.host();
    await h.clearUnitAttentions(DRIVE);
    const p = await volumeStatistics(h);
    expect(counter(p, 0x0000)).toBe(0);
    expect(p.has(0x0001)).toBe(false);
  });

  it('has every parameter LTFS reads for cartridge health, each a 1, 2, 4 or 8-byte counter', async () => {
    const h = await loaded();
    const p = await volumeStatistics(h);
    expect(counter(p, 0x0000)).toBe(1);
    for (const code of CART_HEALTH) expect(() => counter(p, code), code.toString(16)).not.toThrow();
    // A cartridge fresh from minting: its first thread, nothing moved, no errors.
    expect(counter(p, 0x0001)).toBe(1);
    for (const code of [0x0002, 0x0003, 0x0004, 0x0007, 0x0008, 0x0009, 0x000c, 0x000d, 0x0010, 0x0011])
      expect(counter(p, code), code.toString(16)).toBe(0);
    expect(counter(p, 0x0101)).toBe(1);
    expect(p.get(0x0042)?.value.toString('ascii').trim()).toBe(LABEL);
    expect(p.get(0x0042)?.control).toBe(0x01);
    expect([counter(p, 0x0080), counter(p, 0x0081)]).toEqual([0, 0]);
    expect(partitionList(p, 0x0202)).toEqual([12_000_000]);
  });

  it('counts the bytes written in this mount and over the volume life, and every thread', async () => {
    const h = await loaded();
    const block = Buffer.alloc(262_144, 7);
    for (let i = 0; i < 12; i++) ok(await h.exec(DRIVE, Cdb.write6(block.length), { dataOut: block }));
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    let p = await volumeStatistics(h);
    // 3,145,728 bytes: 3 MB (10^6) and one data set.
    expect(counter(p, 0x000e)).toBe(3);
    expect(counter(p, 0x0010)).toBe(3);
    expect(counter(p, 0x0002)).toBe(1);
    expect(partitionList(p, 0x0203)).toEqual([3]);
    expect(counter(p, 0x0017)).toBe(3);

    // The host unloads and loads again (LOAD/UNLOAD): a second thread.
    ok(await h.exec(DRIVE, Cdb.loadUnload(false)));
    ok(await h.exec(DRIVE, Cdb.loadUnload(true)));
    p = await volumeStatistics(h);
    expect(counter(p, 0x0001)).toBe(2);
    expect(counter(p, 0x0101)).toBe(2);
    // This mount moved nothing yet; the volume keeps what earlier mounts wrote.
    expect(counter(p, 0x000e)).toBe(0);
    expect(counter(p, 0x0010)).toBe(3);
  });
});
