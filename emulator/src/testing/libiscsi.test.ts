import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PeripheralType } from '../scsi/constants.js';
import { ScsiDeviceBase } from '../scsi/device-base.js';
import { parseSense } from '../scsi/sense.js';
import type { ScsiDevice } from '../scsi/types.js';
import { type IscsiTarget, startIscsiTarget } from '../transport/iscsi/target.js';
import { LibIscsiSession, TaskManagement } from './libiscsi.js';
import { RamDisk } from './ram-disk.js';

const TARGET = 'iqn.2024-01.org.vtl.test:library';
const HOST = 'iqn.2024-01.org.vtl.test:host';
const STRANGER = 'iqn.2024-01.org.vtl.test:stranger';
const BLOCK = 512;

let target: IscsiTarget;
let disk: RamDisk;
let portal: string;
const sessions: LibIscsiSession[] = [];

async function open(initiator = HOST, headerDigest = false): Promise<LibIscsiSession> {
  const s = await LibIscsiSession.connect(portal, TARGET, initiator, { headerDigest });
  sessions.push(s);
  return s;
}

/** TEST UNIT READY until GOOD: a new nexus first reports the power-on unit attention. */
async function ready(s: LibIscsiSession, lun: number): Promise<void> {
  const first = await s.command(lun, [0, 0, 0, 0, 0, 0]);
  if (first.status === 0) return;
  expect(parseSense(first.sense)).toMatchObject({ key: 6, asc: 0x29, ascq: 0 });
  expect((await s.command(lun, [0, 0, 0, 0, 0, 0])).status).toBe(0);
}

function rw10(op: 0x28 | 0x2a, lba: number, blocks: number): Buffer {
  const cdb = Buffer.alloc(10);
  cdb[0] = op;
  cdb.writeUInt32BE(lba, 2);
  cdb.writeUInt16BE(blocks, 7);
  return cdb;
}

function pattern(bytes: number, seed: number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) b.writeUInt32LE((i * 2654435761 + seed) >>> 0, i);
  return b;
}

beforeAll(async () => {
  disk = new RamDisk(BLOCK, 32768);
  const changer = new ScsiDeviceBase(PeripheralType.MEDIUM_CHANGER, {
    vendor: 'IBM',
    product: '03584L32',
    revision: '0100',
    serial: '0000013100410401',
  });
  target = await startIscsiTarget({
    bind: '127.0.0.1',
    port: 0,
    targetName: TARGET,
    luns: new Map<number, ScsiDevice>([
      [0, disk],
      [1, changer],
    ]),
    authorize: (name) => name !== STRANGER,
    // Small segments so a 4 MiB write needs immediate data, an unsolicited burst and R2Ts.
    limits: { maxRecvDataSegmentLength: 65536, maxBurstLength: 262144 },
  });
  portal = `127.0.0.1:${target.port}`;
});

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await target.stop();
});

describe('libiscsi (koffi) against the emulator iSCSI target', () => {
  it('discovers the target through SendTargets', async () => {
    const found = await LibIscsiSession.discover(portal, HOST);
    expect(found).toEqual([{ targetName: TARGET, portals: [`${portal},1`] }]);
  });

  it('logs in and out, and the target lists the session meanwhile', async () => {
    const s = await LibIscsiSession.connect(portal, TARGET, `${HOST}-login`);
    expect(target.sessions().some((i) => i.initiatorName === `${HOST}-login`)).toBe(true);
    await s.close();
    await expect.poll(() => target.sessions().some((i) => i.initiatorName === `${HOST}-login`)).toBe(false);
  });

  it('refuses an initiator the authorization rule rejects', async () => {
    await expect(LibIscsiSession.connect(portal, TARGET, STRANGER)).rejects.toThrow(/Authorization failure/);
  });

  it('reports the LUNs, and unknown opcodes as ILLEGAL REQUEST 20/00', async () => {
    const s = await open();
    const luns = await s.command(0, [0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], { dataInLength: 256 });
    expect(luns.status).toBe(0);
    expect(luns.data.readUInt32BE(0)).toBe(16);
    expect([luns.data.readUInt16BE(8), luns.data.readUInt16BE(16)]).toEqual([0, 1]);
    await ready(s, 1);
    const bad = await s.command(1, [0xee, 0, 0, 0, 0, 0]);
    expect(bad.status).toBe(2);
    expect(parseSense(bad.sense)).toMatchObject({ key: 5, asc: 0x20, ascq: 0 });
    const inquiry = await s.command(1, [0x12, 0, 0, 0, 96, 0], { dataInLength: 96 });
    expect(inquiry.data[0]).toBe(PeripheralType.MEDIUM_CHANGER);
    expect(inquiry.data.toString('ascii', 16, 24)).toBe('03584L32');
  });

  it('writes 4 MiB (immediate data, unsolicited burst, R2Ts) and reads it back', async () => {
    const s = await open();
    await ready(s, 0);
    const data = pattern(4 * 1024 * 1024, 1);
    const blocks = data.length / BLOCK;
    const write = await s.command(0, rw10(0x2a, 0, blocks), { dataOut: data });
    expect(write.status).toBe(0);
    expect(disk.storage.subarray(0, data.length).equals(data)).toBe(true);
    const read = await s.command(0, rw10(0x28, 0, blocks), { dataInLength: data.length });
    expect(read.status).toBe(0);
    expect(read.data.equals(data)).toBe(true);
    const short = await s.command(0, rw10(0x28, 0, 1), { dataInLength: 4096 });
    expect(short.residual).toEqual({ kind: 'underflow', count: 4096 - BLOCK });
  });

  it('serves several sessions at once', async () => {
    const all = await Promise.all([1, 2, 3, 4].map((i) => open(`${HOST}-${i}`)));
    expect(target.sessions().filter((i) => i.initiatorName.startsWith(`${HOST}-`))).toHaveLength(4);
    await Promise.all(
      all.map(async (s, i) => {
        await ready(s, 0);
        const lba = 16384 + i * 2048;
        const data = pattern(1024 * 1024, i + 10);
        expect((await s.command(0, rw10(0x2a, lba, 2048), { dataOut: data })).status).toBe(0);
        const back = await s.command(0, rw10(0x28, lba, 2048), { dataInLength: data.length });
        expect(back.data.equals(data)).toBe(true);
      }),
    );
  });

  it('works with CRC32C header digests', async () => {
    const s = await open(`${HOST}-digest`, true);
    expect(target.sessions().find((i) => i.initiatorName === `${HOST}-digest`)?.headerDigest).toBe(true);
    await ready(s, 0);
    const data = pattern(256 * 1024, 99);
    expect((await s.command(0, rw10(0x2a, 100, 512), { dataOut: data })).status).toBe(0);
    expect((await s.command(0, rw10(0x28, 100, 512), { dataInLength: data.length })).data.equals(data)).toBe(
      true,
    );
  });

  it('answers task management: LUN reset, unknown tasks, unsupported functions', async () => {
    const s = await open(`${HOST}-tmf`);
    const other = await open(`${HOST}-tmf-other`);
    await ready(s, 1);
    await ready(other, 1);
    expect(await s.taskManagement(1, TaskManagement.LUN_RESET)).toBeUndefined();
    const after = await other.command(1, [0, 0, 0, 0, 0, 0]);
    expect(parseSense(after.sense)).toMatchObject({ key: 6, asc: 0x29, ascq: 0x03 });
    expect(await s.taskManagement(1, TaskManagement.ABORT_TASK, 0x1234, 0)).toMatch(/Task Does Not Exist/);
    expect(await s.taskManagement(0, TaskManagement.TARGET_WARM_RESET)).toMatch(/Not Supported/);
  });
});
