import { parseSense, type ParsedSense } from '../scsi/sense.js';
import { LibIscsiSession } from './libiscsi.js';

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

/**
 * A host for device tests: Debian's libiscsi (testing/libiscsi.ts) logged in over TCP, sending
 * raw CDBs, so every command and every error a test checks has gone through a real initiator
 * library's login, data transfer and status handling.
 */
export class ScsiHost {
  private constructor(
    private readonly session: LibIscsiSession,
    readonly initiatorName: string,
  ) {}

  static async login(port: number, targetName: string, initiatorName: string): Promise<ScsiHost> {
    const session = await LibIscsiSession.connect(`127.0.0.1:${port}`, targetName, initiatorName, {
      timeoutSeconds: 30,
    });
    return new ScsiHost(session, initiatorName);
  }

  async exec(lun: number, cdb: Buffer | number[], opts: ExecOptions = {}): Promise<HostResult> {
    const r = await this.session.command(lun, Buffer.from(cdb), {
      ...(opts.dataOut ? { dataOut: opts.dataOut } : {}),
      ...(opts.allocation ? { dataInLength: opts.allocation } : {}),
    });
    const residual =
      r.residual.kind === 'overflow'
        ? -r.residual.count
        : r.residual.kind === 'underflow'
          ? r.residual.count
          : 0;
    return {
      status: r.status,
      data: r.data,
      residual,
      ...(r.sense.length > 0 ? { senseBytes: r.sense, sense: parseSense(r.sense) } : {}),
    };
  }

  /** TEST UNIT READY until no unit attention is pending; returns the first non-UA result. */
  async clearUnitAttentions(lun: number): Promise<HostResult> {
    for (let i = 0; i < 32; i++) {
      const r = await this.exec(lun, [0, 0, 0, 0, 0, 0]);
      if (r.sense?.key !== 6) return r;
    }
    throw new Error(`LUN ${lun} keeps raising unit attentions`);
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
