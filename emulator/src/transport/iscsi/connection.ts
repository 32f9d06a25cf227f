import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { LoginPhase, type LoginOutcome, type LoginPolicy } from './login.js';
import { loginResponse, nopIn } from './pdu-builders.js';
import { FramingError, PduReader } from './pdu-reader.js';
import { PduWriter } from './pdu-writer.js';
import { type IncomingPdu, RESERVED_TAG, opcodeName, opcodeOf } from './pdu.js';
import { readInto } from './read-into.js';
import { IscsiSession, type SessionEnv } from './session.js';

/** Login PDUs are small; this bounds what an unauthenticated peer can make us buffer. */
const LOGIN_MAX_DATA_SEGMENT = 65536;
/** Stop reading while this much output is queued, so a slow initiator cannot balloon memory. */
const WRITE_BACKLOG_LIMIT = 32 * 1024 * 1024;
/** The first StatSN of a connection (RFC 7143 lets the target choose). */
const INITIAL_STAT_SN = 1;

export interface ConnectionOptions {
  policy: LoginPolicy;
  logger: Logger;
  loginTimeoutMs: number;
  /** 0 disables target-initiated NOP-In pings. */
  nopInIntervalMs: number;
  commandWindow: number;
  /** Builds the session environment once the login tells who the initiator is. */
  sessionEnv(
    login: LoginOutcome,
    connection: IscsiConnection,
  ): Pick<SessionEnv, 'luns' | 'sendTargets' | 'resetLogicalUnit' | 'transferred'>;
  onSession(session: IscsiSession, connection: IscsiConnection): void;
  onClose(connection: IscsiConnection): void;
}

/**
 * One TCP connection: frames PDUs, runs the login phase, then hands PDUs to the session.
 * PDUs are processed strictly in arrival order; an async login step pauses parsing so the
 * digest switch after login lands exactly between two PDUs. Socket reads land where the PDU
 * reader says (see PduReader); the server accepts with `pauseOnConnect` for that.
 */
export class IscsiConnection {
  readonly reader = new PduReader(LOGIN_MAX_DATA_SEGMENT);
  readonly socket: Socket;
  readonly writer: PduWriter;
  readonly remoteAddress: string;
  readonly localAddress: string;
  readonly localPort: number;
  session: IscsiSession | undefined;
  private readonly login: LoginPhase;
  private statSn = INITIAL_STAT_SN;
  private busy = false;
  private closed = false;
  private loginTimer: NodeJS.Timeout | undefined;
  private nopTimer: NodeJS.Timeout | undefined;
  private outstandingPing: number | undefined;
  private logger: Logger;

  constructor(
    accepted: Socket,
    private readonly opts: ConnectionOptions,
  ) {
    const socket = readInto(accepted, {
      buffer: () => this.reader.readBuffer(),
      received: (n, buf) => {
        this.reader.received(buf, n);
        this.pump();
        // Nobody is taking PDUs (a login step runs, or output is backed up): stop reading.
        if (this.reader.backedUp) this.socket.pause();
      },
    });
    this.socket = socket;
    this.writer = new PduWriter(socket);
    this.remoteAddress = `${socket.remoteAddress}:${socket.remotePort}`;
    this.localAddress = (socket.localAddress ?? '').replace(/^::ffff:/, '');
    this.localPort = socket.localPort ?? 0;
    this.logger = opts.logger.child({ peer: this.remoteAddress });
    this.login = new LoginPhase(opts.policy);
    this.reader.segmentFor = (bhs, ahs, dataLength) => this.session?.landingFor(bhs, ahs, dataLength);
    socket.setNoDelay(true);
    // Detects hosts that vanished without a FIN even when target NOP-In pings are off.
    socket.setKeepAlive(true, 30_000);
    socket.on('error', (err) => this.logger.debug({ err }, 'socket error'));
    socket.on('close', () => void this.teardown());
    socket.on('drain', () => {
      // PDUs may already sit in the reader; the initiator could be waiting on their answers.
      if (socket.isPaused()) this.pump();
    });
    this.loginTimer = setTimeout(() => this.close('login timeout'), opts.loginTimeoutMs);
  }

  /** Closes after flushing what is queued; `reason` goes to the log. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.logger.info({ reason }, 'closing connection');
    this.socket.end();
    // A peer that never reads must not keep the socket alive forever.
    setTimeout(() => this.socket.destroy(), 5000).unref();
  }

  /** Takes the PDUs the reader has, until a login step or backed-up output stops it. */
  private pump(): void {
    if (this.busy || this.closed) return;
    try {
      for (let pdu = this.reader.next(); pdu; pdu = this.reader.next()) {
        if (!this.session) {
          this.busy = true;
          this.loginStep(pdu).then(
            () => {
              this.busy = false;
              this.pump();
            },
            (err: unknown) => {
              this.logger.error({ err }, 'login failed');
              this.close('login error');
            },
          );
          return;
        }
        this.session.handle(pdu);
        if (this.writer.backlog > WRITE_BACKLOG_LIMIT) {
          this.socket.pause();
          return;
        }
        if (this.closed) return;
      }
      // Everything received is taken: reading goes on (after a pause for either reason).
      if (this.socket.isPaused() && !this.reader.backedUp) this.socket.resume();
    } catch (err) {
      if (!(err instanceof FramingError)) this.logger.error({ err }, 'PDU handling failed');
      else this.logger.warn({ err: err.message }, 'framing error');
      this.socket.destroy();
    }
  }

  private async loginStep(pdu: IncomingPdu): Promise<void> {
    const step = await this.login.handle(pdu);
    if (this.closed) return;
    const statSn = this.statSn;
    // Every login response carries the next StatSN, including the intermediate ones (RFC 7143 11.13.4).
    if (step.status === 0) this.statSn++;
    const sn = { statSn, expCmdSn: step.cmdSn, maxCmdSn: step.cmdSn + this.opts.commandWindow - 1 };
    const fields = {
      flags: step.flags,
      isid: step.isid,
      tsih: step.tsih,
      itt: step.itt,
      statusClass: step.status >> 8,
      statusDetail: step.status & 0xff,
      dataLength: step.data.length,
    };
    this.writer.send(loginResponse(fields, sn), step.data);
    if (step.failed) {
      this.logger.warn(
        {
          opcode: opcodeName(opcodeOf(pdu.bhs)),
          status: step.status.toString(16),
          ...(this.login.initiator ? { initiator: this.login.initiator } : {}),
          ...(step.reason ? { reason: step.reason } : {}),
        },
        'login refused',
      );
      this.close('login refused');
      return;
    }
    if (step.done) this.enterFullFeature(step.done);
  }

  private enterFullFeature(login: LoginOutcome): void {
    clearTimeout(this.loginTimer);
    const { params } = login;
    this.reader.headerDigest = this.writer.headerDigest = params.headerDigest;
    this.reader.dataDigest = this.writer.dataDigest = params.dataDigest;
    this.reader.maxDataSegment = this.opts.policy.limits.maxRecvDataSegmentLength;
    this.logger = this.logger.child({ initiator: login.initiatorName, tsih: login.tsih });
    const env: SessionEnv = {
      ...this.opts.sessionEnv(login, this),
      logger: this.logger,
      limits: this.opts.policy.limits,
      commandWindow: this.opts.commandWindow,
      send: (bhs, data, onSent) => this.writer.send(bhs, data, onSent),
      batch: (fn) => this.writer.batch(fn),
      close: (reason) => this.close(reason),
      pingAnswered: (ttt) => this.pingAnswered(ttt),
    };
    this.session = new IscsiSession(login, env, this.statSn);
    this.logger.info({ type: login.type, params }, 'session logged in');
    this.opts.onSession(this.session, this);
    if (this.opts.nopInIntervalMs > 0) this.startPings();
  }

  /** Target-initiated NOP-In: an initiator that stops answering is treated as gone. */
  private startPings(): void {
    let tag = 0;
    this.nopTimer = setInterval(() => {
      const session = this.session;
      if (!session) return;
      if (this.outstandingPing !== undefined) return this.close('NOP-In ping unanswered');
      tag = (tag + 1) % RESERVED_TAG;
      this.outstandingPing = tag;
      this.writer.send(nopIn(RESERVED_TAG, tag, undefined, 0, session.sn(false)));
    }, this.opts.nopInIntervalMs);
    this.nopTimer.unref();
  }

  private pingAnswered(ttt: number): void {
    if (ttt === this.outstandingPing) this.outstandingPing = undefined;
  }

  private async teardown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.loginTimer);
    clearInterval(this.nopTimer);
    this.reader.discard();
    try {
      await this.session?.end();
    } finally {
      this.opts.onClose(this);
    }
  }
}
