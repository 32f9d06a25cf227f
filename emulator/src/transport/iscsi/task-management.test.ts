import { afterEach, describe, expect, it } from 'vitest';
import { parseSense } from '../../scsi/sense.js';
import { encodeLun } from '../../scsi/lun.js';
import { lentAlignedSlots } from '../../media/aligned-buffers.js';
import { Op, opcodeOf } from './pdu.js';
import { RawInitiator } from './testing/raw-initiator.js';
import {
  HOLD_OPCODE,
  TEST_INITIATOR,
  TEST_TARGET,
  type TestTarget,
  startTestTarget,
} from './testing/test-target.js';
import { TmfFunction, TmfResponse } from './task-management.js';

let t: TestTarget | undefined;
const clients: RawInitiator[] = [];

async function loggedIn(isidTail = 1): Promise<RawInitiator> {
  const c = await RawInitiator.connect(t!.target.port);
  clients.push(c);
  const isid = Buffer.from([0x80, 0, 0, 0, 0, isidTail]);
  expect((await c.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET, isid })).status).toBe(0);
  return c;
}

function tmf(c: RawInitiator, fn: number, lun: number, referenced = 0xffffffff, refCmdSn = 0): number {
  const bhs = Buffer.alloc(48);
  const itt = c.itt++;
  bhs[0] = Op.TASK_MGMT_REQUEST | 0x40;
  bhs[1] = 0x80 | fn;
  encodeLun(lun, bhs, 8);
  bhs.writeUInt32BE(itt, 16);
  bhs.writeUInt32BE(referenced, 20);
  bhs.writeUInt32BE(c.cmdSn, 24);
  bhs.writeUInt32BE(refCmdSn, 32);
  c.send(bhs);
  return itt;
}

async function tmfResponse(c: RawInitiator, itt: number): Promise<number> {
  const pdu = await c.next();
  expect(opcodeOf(pdu.bhs)).toBe(Op.TASK_MGMT_RESPONSE);
  expect(pdu.bhs.readUInt32BE(16)).toBe(itt);
  return pdu.bhs[2]!;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t?.target.stop();
  t = undefined;
});

describe('iSCSI task management', () => {
  it('aborts a task in flight: TMF response, and no status for the aborted task', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    await c.collect(c.command({ lun: 1, cdb: [0, 0, 0, 0, 0, 0] })); // power-on UA
    const cmdSn = c.cmdSn;
    const held = c.command({ lun: 1, cdb: [HOLD_OPCODE, 0, 0, 0, 0, 0] });
    await expect.poll(() => t!.changer.held).toBe(1);
    expect(t.target.sessions()[0]!.outstandingTasks).toBe(1);
    expect(await tmfResponse(c, tmf(c, TmfFunction.ABORT_TASK, 1, held, cmdSn))).toBe(
      TmfResponse.FUNCTION_COMPLETE,
    );
    await expect(c.next(300)).rejects.toThrow(/timed out/);
    expect(t.target.sessions()[0]!.outstandingTasks).toBe(0);
    // A task that completed long ago: RefCmdSN is below ExpCmdSN.
    expect(await tmfResponse(c, tmf(c, TmfFunction.ABORT_TASK, 1, 0x7777, cmdSn))).toBe(
      TmfResponse.TASK_DOES_NOT_EXIST,
    );
  });

  it('gives back the data-out buffer of a write that is aborted or fails while collecting', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    await c.collect(c.command({ cdb: [0, 0, 0, 0, 0, 0] })); // power-on UA
    const before = lentAlignedSlots();
    // WRITE(10) of 256 KiB with 8 KiB of immediate data: the rest waits for an R2T.
    const write = (lba: number) => {
      const cmdSn = c.cmdSn;
      const cdb = [0x2a, 0, 0, 0, 0, lba, 0, 0x02, 0x00, 0];
      const itt = c.command({ cdb, write: true, edtl: 256 * 1024, data: Buffer.alloc(8192, 7) });
      return { itt, cmdSn };
    };
    const aborted = write(0);
    const r2t = await c.next();
    expect(opcodeOf(r2t.bhs)).toBe(Op.R2T);
    expect(lentAlignedSlots()).toBe(before + 1);
    expect(await tmfResponse(c, tmf(c, TmfFunction.ABORT_TASK, 0, aborted.itt, aborted.cmdSn))).toBe(
      TmfResponse.FUNCTION_COMPLETE,
    );
    expect(lentAlignedSlots()).toBe(before);

    // A data-out at the wrong offset ends the command with ABORTED COMMAND: same.
    const broken = write(1);
    const r2t2 = await c.next();
    expect(opcodeOf(r2t2.bhs)).toBe(Op.R2T);
    const ttt = r2t2.bhs.readUInt32BE(20);
    c.dataOut({ itt: broken.itt, ttt, offset: 4096, dataSn: 0, final: true, data: Buffer.alloc(4096) });
    expect(opcodeOf((await c.next()).bhs)).toBe(Op.REJECT);
    const response = await c.next();
    expect(opcodeOf(response.bhs)).toBe(Op.SCSI_RESPONSE);
    expect(response.bhs[3]).toBe(2);
    expect(lentAlignedSlots()).toBe(before);
  });

  it('aborts a write whose immediate data is still arriving when its LUN is reset, and gives its buffer back', async () => {
    t = await startTestTarget();
    const a = await loggedIn(1);
    const b = await loggedIn(2);
    for (const c of [a, b]) await c.collect(c.command({ cdb: [0, 0, 0, 0, 0, 0] })); // power-on UA
    const before = lentAlignedSlots();
    // WRITE(10) of 512 KiB with a first burst of 64 KiB immediate data, which has begun to arrive.
    const cdb = [0x2a, 0, 0, 0, 0, 0, 0, 0x04, 0x00, 0];
    const { pdu } = a.commandPdu({ cdb, write: true, edtl: 512 * 1024, data: Buffer.alloc(64 * 1024, 9) });
    a.socket.write(pdu.subarray(0, 48 + 1000));
    await expect(a.next(200)).rejects.toThrow(/timed out/);
    expect(await tmfResponse(b, tmf(b, TmfFunction.LOGICAL_UNIT_RESET, 0))).toBe(
      TmfResponse.FUNCTION_COMPLETE,
    );
    a.socket.write(pdu.subarray(48 + 1000));
    await expect(a.next(300)).rejects.toThrow(/timed out/);
    expect(t.target.sessions().map((s) => s.outstandingTasks)).toEqual([0, 0]);
    expect(lentAlignedSlots()).toBe(before);
    // The nexus goes on: its next command sees the reset's unit attention.
    const next = await a.collect(a.command({ cdb: [0, 0, 0, 0, 0, 0] }));
    expect(parseSense(next.sense!)).toMatchObject({ key: 6, asc: 0x29, ascq: 0x03 });
  });

  it('resets a logical unit: aborts its tasks everywhere and raises 29/03 for the other nexus', async () => {
    t = await startTestTarget();
    const a = await loggedIn(1);
    const b = await loggedIn(2);
    for (const c of [a, b]) await c.collect(c.command({ lun: 1, cdb: [0, 0, 0, 0, 0, 0] }));
    b.command({ lun: 1, cdb: [HOLD_OPCODE, 0, 0, 0, 0, 0] });
    await expect.poll(() => t!.changer.held).toBe(1);
    expect(await tmfResponse(a, tmf(a, TmfFunction.LOGICAL_UNIT_RESET, 1))).toBe(
      TmfResponse.FUNCTION_COMPLETE,
    );
    const afterB = await b.collect(b.command({ lun: 1, cdb: [0, 0, 0, 0, 0, 0] }));
    expect(parseSense(afterB.sense!)).toMatchObject({ key: 6, asc: 0x29, ascq: 0x03 });
    const afterA = await a.collect(a.command({ lun: 1, cdb: [0, 0, 0, 0, 0, 0] }));
    expect(afterA.status).toBe(0);
  });

  it('answers functions it does not implement, and unknown LUNs', async () => {
    t = await startTestTarget();
    const c = await loggedIn();
    expect(await tmfResponse(c, tmf(c, TmfFunction.TARGET_WARM_RESET, 0))).toBe(TmfResponse.NOT_SUPPORTED);
    expect(await tmfResponse(c, tmf(c, TmfFunction.CLEAR_ACA, 0))).toBe(TmfResponse.NOT_SUPPORTED);
    expect(await tmfResponse(c, tmf(c, TmfFunction.LOGICAL_UNIT_RESET, 9))).toBe(
      TmfResponse.LUN_DOES_NOT_EXIST,
    );
    expect(await tmfResponse(c, tmf(c, TmfFunction.ABORT_TASK_SET, 0))).toBe(TmfResponse.FUNCTION_COMPLETE);
  });
});
