import { parseSense, type ParsedSense } from '../scsi/sense.js';
import { Op, opcodeOf } from '../transport/iscsi/pdu.js';
import { RawInitiator } from '../transport/iscsi/testing/raw-initiator.js';
import type { KeyValue } from '../transport/iscsi/text-keys.js';

/** What a host sees of one command: status, data-in, decoded sense and the iSCSI residual. */
export interface HostResult {
  status: number;
  data: Buffer;
  sense?: ParsedSense;
  senseBytes?: Buffer;
  /** Residual count of the response; negative for an overflow. */
  residual: number;
}

export interface ExecOptions {
  /** Data-out (a write); its length is the expected transfer length. */
  dataOut?: Buffer;
  /** Expected data-in length (a read). */
  allocation?: number;
}

const FIRST_BURST = 65536;
const SEGMENT = 65536;

/**
 * An initiator for device tests: a real iSCSI login on a socket, commands with immediate
 * data, unsolicited data and R2T-driven data-out, and the target's data-in, status and sense.
 * It is the raw initiator plus the data-out loop a host's iSCSI stack would run.
 */
export class ScsiHost {
  private constructor(
    private readonly c: RawInitiator,
    readonly initiatorName: string,
  ) {}

  static async login(port: number, targetName: string, initiatorName: string): Promise<ScsiHost> {
    const c = await RawInitiator.connect(port);
    const keys: KeyValue[] = [
      ['ImmediateData', 'Yes'],
      ['InitialR2T', 'No'],
      ['FirstBurstLength', String(FIRST_BURST)],
      ['MaxBurstLength', String(1024 * 1024)],
      ['MaxRecvDataSegmentLength', String(SEGMENT)],
    ];
    const result = await c.login({ initiatorName, targetName, keys });
    if (result.status !== 0) {
      c.close();
      throw new Error(`login refused: status 0x${result.status.toString(16)}`);
    }
    return new ScsiHost(c, initiatorName);
  }

  async exec(lun: number, cdb: Buffer | number[], opts: ExecOptions = {}): Promise<HostResult> {
    const out = opts.dataOut;
    const edtl = out ? out.length : (opts.allocation ?? 0);
    const immediate = out ? out.subarray(0, Math.min(out.length, FIRST_BURST, SEGMENT)) : undefined;
    const itt = this.c.command({
      lun,
      cdb: Buffer.from(cdb),
      edtl,
      read: !out && edtl > 0,
      write: !!out,
      ...(immediate && immediate.length > 0 ? { data: immediate } : {}),
    });
    const data: Buffer[] = [];
    for (;;) {
      const pdu = await this.c.next(30_000);
      if (pdu.bhs.readUInt32BE(16) !== itt) continue;
      const op = opcodeOf(pdu.bhs);
      if (op === Op.R2T) {
        this.answerR2t(itt, lun, pdu.bhs, out ?? Buffer.alloc(0));
      } else if (op === Op.DATA_IN) {
        data.push(pdu.data);
        if ((pdu.bhs[1]! & 0x01) !== 0)
          return { status: pdu.bhs[3]!, data: Buffer.concat(data), residual: residualOf(pdu.bhs) };
      } else if (op === Op.SCSI_RESPONSE) {
        const senseBytes =
          pdu.data.length >= 2 ? pdu.data.subarray(2, 2 + pdu.data.readUInt16BE(0)) : undefined;
        return {
          status: pdu.bhs[3]!,
          data: Buffer.concat(data),
          residual: residualOf(pdu.bhs),
          ...(senseBytes && senseBytes.length > 0 ? { senseBytes, sense: parseSense(senseBytes) } : {}),
        };
      } else {
        throw new Error(`unexpected PDU 0x${op.toString(16)} for a command`);
      }
    }
  }

  /** TEST UNIT READY until no unit attention is pending; returns the first non-UA result. */
  async clearUnitAttentions(lun: number): Promise<HostResult> {
    for (let i = 0; i < 32; i++) {
      const r = await this.exec(lun, [0, 0, 0, 0, 0, 0]);
      if (r.sense?.key !== 6) return r;
    }
    throw new Error(`LUN ${lun} keeps raising unit attentions`);
  }

  close(): void {
    this.c.close();
  }

  private answerR2t(itt: number, lun: number, bhs: Buffer, out: Buffer): void {
    const ttt = bhs.readUInt32BE(20);
    const offset = bhs.readUInt32BE(40);
    const length = bhs.readUInt32BE(44);
    for (let done = 0, dataSn = 0; done < length; dataSn++) {
      const n = Math.min(SEGMENT, length - done);
      this.c.dataOut({
        itt,
        ttt,
        lun,
        offset: offset + done,
        dataSn,
        final: done + n === length,
        data: out.subarray(offset + done, offset + done + n),
      });
      done += n;
    }
  }
}

function residualOf(bhs: Buffer): number {
  const flags = bhs[1]!;
  const count = bhs.readUInt32BE(44);
  if ((flags & 0x04) !== 0) return -count;
  return (flags & 0x02) !== 0 ? count : 0;
}
