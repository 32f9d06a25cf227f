import { type Socket, connect } from 'node:net';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { crc32c, digestBytes } from '../../../util/crc32c.js';
import { PduReader } from '../pdu-reader.js';
import {
  BHS_LENGTH,
  FINAL,
  IMMEDIATE,
  type IncomingPdu,
  Op,
  READ_FLAG,
  WRITE_FLAG,
  opcodeOf,
} from '../pdu.js';
import { type KeyValue, parseKeys, serializeKeys } from '../text-keys.js';
import { encodeLun } from '../../../scsi/lun.js';

export interface RawLoginOptions {
  initiatorName: string;
  targetName?: string;
  sessionType?: 'Normal' | 'Discovery';
  /** Extra operational keys; the target's answers come back in `keys`. */
  keys?: KeyValue[];
  /** Run a security stage with AuthMethod first. */
  securityStage?: string;
  /** Run a CHAP exchange in the security stage (AuthMethod `securityStage`, default CHAP,None). */
  chap?: RawChap;
  isid?: Buffer;
}

export interface RawChap {
  username: string;
  secret: string;
  /** CHAP_A offered (default 5). */
  algorithms?: string;
  /** Leave out CHAP_N/CHAP_R and ask to move on anyway. */
  omitResponse?: boolean;
  /** Mutual CHAP: challenge the target; `reflect` sends the target's own challenge back. */
  mutual?: { identifier: number; challenge: Buffer | 'reflect' };
}

export interface RawLoginResult {
  status: number;
  tsih: number;
  keys: Map<string, string>;
  statSn: number;
  pdus: IncomingPdu[];
}

export interface RawCommand {
  lun?: number;
  cdb: Buffer | number[];
  edtl?: number;
  read?: boolean;
  write?: boolean;
  /** Immediate data in the command PDU. */
  data?: Buffer;
  /** F bit: no unsolicited Data-Out follows (default true). */
  final?: boolean;
  itt?: number;
  immediate?: boolean;
  cmdSn?: number;
}

/**
 * A deliberately dumb initiator over a raw socket, for protocol tests a real initiator will not
 * do on purpose: odd CmdSNs, malformed PDUs, task management against tasks in flight.
 */
export class RawInitiator {
  readonly reader = new PduReader(16 * 1024 * 1024);
  cmdSn = 1;
  itt = 0x1000;
  headerDigest = false;
  dataDigest = false;
  private readonly inbox: IncomingPdu[] = [];
  private waiters: Array<() => void> = [];
  private closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      for (let pdu = this.reader.next(); pdu; pdu = this.reader.next()) this.inbox.push(pdu);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number, host = '127.0.0.1'): Promise<RawInitiator> {
    const socket = connect(port, host);
    await once(socket, 'connect');
    return new RawInitiator(socket);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** The next PDU from the target; rejects on timeout or when the connection closes. */
  async next(timeoutMs = 5000): Promise<IncomingPdu> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pdu = this.inbox.shift();
      if (pdu) return pdu;
      if (this.closed) throw new Error('connection closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a PDU');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until the target closes the connection. */
  async closedByTarget(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('target kept the connection open');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  send(bhs: Buffer, data: Buffer = Buffer.alloc(0)): void {
    this.socket.write(this.frame(bhs, data));
  }

  /** A PDU's bytes on the wire (with padding and the digests in use). */
  frame(bhs: Buffer, data: Buffer = Buffer.alloc(0)): Buffer {
    bhs.writeUInt32BE(data.length & 0xffffff, 4);
    const parts = [bhs];
    if (this.headerDigest) parts.push(digestBytes(crc32c(bhs)));
    if (data.length) {
      const pad = Buffer.alloc((4 - (data.length & 3)) & 3);
      parts.push(data, pad);
      if (this.dataDigest) parts.push(digestBytes(crc32c(pad, crc32c(data))));
    }
    return Buffer.concat(parts);
  }

  async login(opts: RawLoginOptions): Promise<RawLoginResult> {
    const isid = opts.isid ?? Buffer.from([0x80, 0, 0, 0, 0, 1]);
    const declarations: KeyValue[] = [
      ['InitiatorName', opts.initiatorName],
      ['SessionType', opts.sessionType ?? 'Normal'],
      ...(opts.targetName ? ([['TargetName', opts.targetName]] as KeyValue[]) : []),
    ];
    const pdus: IncomingPdu[] = [];
    const keys = new Map<string, string>();
    let tsih = 0;
    let statSn = 0;
    type Stage = { csg: number; nsg: number; transit: boolean; pairs: () => KeyValue[] };
    const operational: Stage = { csg: 1, nsg: 3, transit: true, pairs: () => opts.keys ?? [] };
    const stages: Stage[] = opts.chap
      ? [...chapStages(opts.chap, declarations, opts.securityStage ?? 'CHAP,None', keys), operational]
      : opts.securityStage
        ? [
            {
              csg: 0,
              nsg: 1,
              transit: true,
              pairs: () => [...declarations, ['AuthMethod', opts.securityStage!]],
            },
            operational,
          ]
        : [{ ...operational, pairs: () => [...declarations, ...(opts.keys ?? [])] }];
    for (const stage of stages) {
      const bhs = Buffer.alloc(BHS_LENGTH);
      bhs[0] = Op.LOGIN_REQUEST | IMMEDIATE;
      bhs[1] = (stage.transit ? FINAL | stage.nsg : 0) | (stage.csg << 2);
      isid.copy(bhs, 8);
      bhs.writeUInt16BE(tsih, 14);
      bhs.writeUInt32BE(this.itt, 16);
      bhs.writeUInt32BE(this.cmdSn, 24);
      this.send(bhs, serializeKeys(stage.pairs()));
      const reply = await this.next();
      pdus.push(reply);
      for (const [k, v] of parseKeys(reply.data).pairs) keys.set(k, v);
      const status = reply.bhs.readUInt16BE(36);
      tsih = reply.bhs.readUInt16BE(14);
      statSn = reply.bhs.readUInt32BE(24);
      if (status !== 0) return { status, tsih, keys, statSn, pdus };
    }
    this.itt++;
    this.headerDigest = this.reader.headerDigest = keys.get('HeaderDigest') === 'CRC32C';
    this.dataDigest = this.reader.dataDigest = keys.get('DataDigest') === 'CRC32C';
    return { status: 0, tsih, keys, statSn, pdus };
  }

  /** Sends a SCSI Command PDU; returns its ITT. */
  command(c: RawCommand): number {
    const { itt, pdu } = this.commandPdu(c);
    this.socket.write(pdu);
    return itt;
  }

  /** A SCSI Command PDU's bytes, for a test to send in pieces of its choosing. */
  commandPdu(c: RawCommand): { itt: number; pdu: Buffer } {
    const bhs = Buffer.alloc(BHS_LENGTH);
    const itt = c.itt ?? this.itt++;
    bhs[0] = Op.SCSI_COMMAND | (c.immediate ? IMMEDIATE : 0);
    bhs[1] = (c.final === false ? 0 : FINAL) | (c.read ? READ_FLAG : 0) | (c.write ? WRITE_FLAG : 0) | 0x01;
    encodeLun(c.lun ?? 0, bhs, 8);
    bhs.writeUInt32BE(itt, 16);
    bhs.writeUInt32BE(c.edtl ?? 0, 20);
    bhs.writeUInt32BE(c.cmdSn ?? this.cmdSn, 24);
    if (c.cmdSn === undefined && !c.immediate) this.cmdSn++;
    Buffer.from(c.cdb).copy(bhs, 32, 0, 16);
    return { itt, pdu: this.frame(bhs, c.data) };
  }

  dataOut(f: {
    itt: number;
    ttt: number;
    offset: number;
    dataSn: number;
    final: boolean;
    data: Buffer;
    lun?: number;
  }): void {
    const bhs = Buffer.alloc(BHS_LENGTH);
    bhs[0] = Op.DATA_OUT;
    bhs[1] = f.final ? FINAL : 0;
    encodeLun(f.lun ?? 0, bhs, 8);
    bhs.writeUInt32BE(f.itt, 16);
    bhs.writeUInt32BE(f.ttt, 20);
    bhs.writeUInt32BE(f.dataSn, 36);
    bhs.writeUInt32BE(f.offset, 40);
    this.send(bhs, f.data);
  }

  /** Collects the PDUs of one command up to its status (SCSI Response or Data-In with S). */
  async collect(
    itt: number,
    timeoutMs = 5000,
  ): Promise<{ pdus: IncomingPdu[]; status: number; data: Buffer; sense?: Buffer }> {
    const pdus: IncomingPdu[] = [];
    const data: Buffer[] = [];
    for (;;) {
      const pdu = await this.next(timeoutMs);
      if (pdu.bhs.readUInt32BE(16) !== itt)
        throw new Error(`unexpected PDU 0x${opcodeOf(pdu.bhs).toString(16)}`);
      pdus.push(pdu);
      const op = opcodeOf(pdu.bhs);
      if (op === Op.DATA_IN) {
        data.push(pdu.data);
        if ((pdu.bhs[1]! & 0x01) !== 0) return { pdus, status: pdu.bhs[3]!, data: Buffer.concat(data) };
      } else if (op === Op.SCSI_RESPONSE) {
        const sense = pdu.data.length >= 2 ? pdu.data.subarray(2, 2 + pdu.data.readUInt16BE(0)) : undefined;
        return { pdus, status: pdu.bhs[3]!, data: Buffer.concat(data), ...(sense ? { sense } : {}) };
      } else {
        return { pdus, status: -1, data: Buffer.concat(data) };
      }
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The security stage of a CHAP login (RFC 7143 12.1.3): method, algorithm, then the answer. */
function chapStages(
  chap: RawChap,
  declarations: KeyValue[],
  authMethod: string,
  received: Map<string, string>,
): Array<{ csg: number; nsg: number; transit: boolean; pairs: () => KeyValue[] }> {
  const answer = (): KeyValue[] => {
    const challenge = Buffer.from((received.get('CHAP_C') ?? '0x').slice(2), 'hex');
    const id = Number(received.get('CHAP_I'));
    const md5 = createHash('md5')
      .update(Buffer.from([id]))
      .update(chap.secret)
      .update(challenge)
      .digest();
    const pairs: KeyValue[] = chap.omitResponse
      ? []
      : [
          ['CHAP_N', chap.username],
          ['CHAP_R', `0x${md5.toString('hex')}`],
        ];
    if (chap.mutual) {
      const ours = chap.mutual.challenge === 'reflect' ? challenge : chap.mutual.challenge;
      pairs.push(['CHAP_I', String(chap.mutual.identifier)], ['CHAP_C', `0x${ours.toString('hex')}`]);
    }
    // The target's answer to our challenge (mutual CHAP) arrives under the same key names.
    received.delete('CHAP_N');
    received.delete('CHAP_R');
    return pairs;
  };
  return [
    { csg: 0, nsg: 1, transit: false, pairs: () => [...declarations, ['AuthMethod', authMethod]] },
    { csg: 0, nsg: 1, transit: false, pairs: () => [['CHAP_A', chap.algorithms ?? '5']] },
    { csg: 0, nsg: 1, transit: true, pairs: answer },
  ];
}
