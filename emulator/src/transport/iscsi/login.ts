import type { ChapCredentials } from './chap.js';
import type { ChapThrottle } from './chap-throttle.js';
import { type SessionParams, Negotiator, type TargetLimits } from './negotiation.js';
import { FINAL, type IncomingPdu, Op, flagsOf, ittOf, opcodeOf } from './pdu.js';
import { SecurityStage, isSecurityKey } from './security-stage.js';
import { type KeyValue, parseKeys, serializeKeys } from './text-keys.js';

/** Login status class and detail (RFC 7143 11.13.5), as one 16-bit value. */
export const LoginStatus = {
  SUCCESS: 0x0000,
  INITIATOR_ERROR: 0x0200,
  AUTHENTICATION_FAILURE: 0x0201,
  AUTHORIZATION_FAILURE: 0x0202,
  TARGET_NOT_FOUND: 0x0203,
  UNSUPPORTED_VERSION: 0x0205,
  TOO_MANY_CONNECTIONS: 0x0206,
  MISSING_PARAMETER: 0x0207,
  SESSION_TYPE_NOT_SUPPORTED: 0x0209,
  SESSION_DOES_NOT_EXIST: 0x020a,
  INVALID_DURING_LOGIN: 0x020b,
  TARGET_ERROR: 0x0300,
} as const;

/** What the log says about a refusal decided on the first request. */
const REFUSALS: Record<number, string> = {
  [LoginStatus.AUTHORIZATION_FAILURE]: 'the initiator is not in the initiator registry',
  [LoginStatus.TARGET_NOT_FOUND]: 'the initiator asked for another target name',
};

const STAGE_SECURITY = 0;
const STAGE_OPERATIONAL = 1;
const STAGE_FULL_FEATURE = 3;
const CONTINUE = 0x40;

export type SessionType = 'Normal' | 'Discovery';

/** Which LUNs of the map an initiator may see: all, or a subset (possibly empty). */
export type LunAccess = 'all' | ReadonlySet<number>;

/** What the target tells the login code. */
export interface LoginPolicy {
  targetName: string;
  targetAlias?: string;
  portalGroupTag: number;
  limits: TargetLimits;
  /** undefined: refuse with AUTHORIZATION FAILURE. */
  authorize(initiatorName: string): Promise<LunAccess | undefined>;
  /** The initiator's CHAP credentials, read at its login; undefined: AuthMethod=None. */
  chap?(initiatorName: string): ChapCredentials | undefined;
  /** Counts wrong CHAP answers per initiator name and locks guessers out (chap-throttle.ts). */
  chapThrottle?: ChapThrottle;
  /** Told when a wrong CHAP answer started a lockout of the name. */
  onChapLockout?(initiatorName: string, failures: number, lockoutMs: number): void;
  /** Whether a session with this TSIH exists (a connection trying to join it). */
  sessionExists(tsih: number): boolean;
  allocateTsih(): number;
}

/** A completed login: what the session is built from. */
export interface LoginOutcome {
  initiatorName: string;
  initiatorAlias?: string;
  isid: Buffer;
  tsih: number;
  cid: number;
  type: SessionType;
  params: SessionParams;
  access: LunAccess;
  /** CmdSN the first full-feature command carries. */
  expCmdSn: number;
}

/** One login response to send, and whether the login ended. */
export interface LoginStep {
  flags: number;
  status: number;
  itt: number;
  isid: Buffer;
  tsih: number;
  data: Buffer;
  /** CmdSN of the request, echoed as ExpCmdSN. */
  cmdSn: number;
  done?: LoginOutcome;
  failed?: boolean;
  /** Why the login failed, for the log (never a secret). */
  reason?: string;
}

/**
 * The login phase of one connection (RFC 7143 6): security stage (AuthMethod=None, or CHAP for
 * an initiator with credentials), then operational negotiation, then full feature phase.
 * Authorization is decided on the first request so a refused initiator learns nothing else.
 */
export class LoginPhase {
  private stage = -1;
  private partial: Buffer = Buffer.alloc(0);
  private negotiator: Negotiator | undefined;
  private security = new SecurityStage(undefined);
  private initiatorName = '';
  private initiatorAlias: string | undefined;
  private type: SessionType = 'Normal';
  private access: LunAccess = 'all';
  private sentPortalGroupTag = false;

  constructor(private readonly policy: LoginPolicy) {}

  /** The InitiatorName the first request declared ('' before it). */
  get initiator(): string {
    return this.initiatorName;
  }

  async handle(pdu: IncomingPdu): Promise<LoginStep> {
    const { bhs } = pdu;
    const flags = flagsOf(bhs);
    const csg = (flags >> 2) & 3;
    const nsg = flags & 3;
    const transit = (flags & FINAL) !== 0;
    const isid = bhs.subarray(8, 14);
    const tsih = bhs.readUInt16BE(14);
    const base = { itt: ittOf(bhs), isid, tsih, cmdSn: bhs.readUInt32BE(24) };
    const fail = (status: number, reason?: string): LoginStep => ({
      ...base,
      flags: csg << 2,
      status,
      data: Buffer.alloc(0),
      failed: true,
      ...(reason ? { reason } : {}),
    });

    if (opcodeOf(bhs) !== Op.LOGIN_REQUEST) return fail(LoginStatus.INVALID_DURING_LOGIN);
    if (bhs[3]! > 0) return fail(LoginStatus.UNSUPPORTED_VERSION);
    if (csg !== STAGE_SECURITY && csg !== STAGE_OPERATIONAL) return fail(LoginStatus.INITIATOR_ERROR);
    if (this.stage >= 0 && csg !== this.stage) return fail(LoginStatus.INITIATOR_ERROR);
    if (transit && (nsg <= csg || nsg === 2)) return fail(LoginStatus.INITIATOR_ERROR);

    const { pairs, rest } = parseKeys(Buffer.concat([this.partial, pdu.data]));
    this.partial = rest;
    if ((flags & CONTINUE) !== 0) {
      // Text continues in the next request; answer with an empty response and wait (RFC 7143 6.3).
      return { ...base, flags: csg << 2, status: LoginStatus.SUCCESS, data: Buffer.alloc(0) };
    }

    const reply: KeyValue[] = [];
    if (this.stage < 0) {
      const refused = await this.first(pairs, tsih);
      if (refused !== undefined) return fail(refused, REFUSALS[refused]);
      this.negotiator = new Negotiator(this.policy.limits, this.type === 'Discovery');
      // Discovery sessions authenticate like normal ones: same IQN, same credentials.
      this.security = new SecurityStage(this.policy.chap?.(this.initiatorName));
    }
    this.stage = csg;
    const security = this.security;
    const throttle = security.usesChap ? this.policy.chapThrottle : undefined;
    const lockedMs = throttle?.lockedFor(this.initiatorName) ?? 0;
    if (lockedMs > 0)
      return fail(
        LoginStatus.AUTHENTICATION_FAILURE,
        `too many wrong CHAP answers for this initiator name; CHAP logins are refused for ${Math.ceil(lockedMs / 1000)} s more`,
      );
    if (csg === STAGE_SECURITY) {
      const answer = security.respond(pairs.filter(isSecurityKey));
      if (answer.failure !== undefined) {
        if (answer.wrongAnswer && throttle) {
          const { failures, lockoutMs } = throttle.failed(this.initiatorName);
          if (lockoutMs > 0) this.policy.onChapLockout?.(this.initiatorName, failures, lockoutMs);
        }
        return fail(LoginStatus.AUTHENTICATION_FAILURE, answer.failure);
      }
      if (security.complete) throttle?.succeeded(this.initiatorName);
      reply.push(...answer.reply);
    } else if (!security.complete) {
      return fail(
        LoginStatus.AUTHENTICATION_FAILURE,
        'the initiator skipped the CHAP exchange it is required to do',
      );
    }
    // The initiator asks to move on before CHAP is done: it stays in this stage (RFC 7143 6.2).
    const leaving = transit && security.complete;
    const operational = pairs.filter((p) => !isSecurityKey(p));
    // With CHAP the security stage carries security keys only (what open-iscsi and LIO expect);
    // the declarations wait for the operational stage.
    if (!security.usesChap || csg !== STAGE_SECURITY || (leaving && nsg === STAGE_FULL_FEATURE))
      reply.push(...this.negotiator!.respond(operational));
    else if (operational.length > 0) reply.push(...this.negotiator!.respond(operational, false));
    if (!this.sentPortalGroupTag) {
      this.sentPortalGroupTag = true;
      // RFC 7143 13.9: returned in the first login response of a normal session.
      if (this.type === 'Normal') {
        reply.push(['TargetPortalGroupTag', String(this.policy.portalGroupTag)]);
        if (this.policy.targetAlias) reply.push(['TargetAlias', this.policy.targetAlias]);
      }
    }

    let responseFlags = csg << 2;
    let done: LoginOutcome | undefined;
    if (leaving) {
      responseFlags |= FINAL | nsg;
      this.stage = nsg;
      if (nsg === STAGE_FULL_FEATURE) {
        const newTsih = this.policy.allocateTsih();
        done = {
          initiatorName: this.initiatorName,
          ...(this.initiatorAlias ? { initiatorAlias: this.initiatorAlias } : {}),
          isid: Buffer.from(isid),
          tsih: newTsih,
          cid: bhs.readUInt16BE(20),
          type: this.type,
          params: this.negotiator!.result(),
          access: this.access,
          expCmdSn: base.cmdSn,
        };
        return { ...base, tsih: newTsih, flags: responseFlags, status: 0, data: serializeKeys(reply), done };
      }
    }
    return { ...base, flags: responseFlags, status: LoginStatus.SUCCESS, data: serializeKeys(reply) };
  }

  /** Checks the declarations of the first request; returns a failure status or undefined. */
  private async first(pairs: readonly KeyValue[], tsih: number): Promise<number | undefined> {
    const get = (key: string) => pairs.find(([k]) => k === key)?.[1];
    if (tsih !== 0) {
      return this.policy.sessionExists(tsih)
        ? LoginStatus.TOO_MANY_CONNECTIONS
        : LoginStatus.SESSION_DOES_NOT_EXIST;
    }
    const initiatorName = get('InitiatorName');
    if (!initiatorName) return LoginStatus.MISSING_PARAMETER;
    this.initiatorName = initiatorName;
    this.initiatorAlias = get('InitiatorAlias');
    const type = get('SessionType') ?? 'Normal';
    if (type !== 'Normal' && type !== 'Discovery') return LoginStatus.SESSION_TYPE_NOT_SUPPORTED;
    this.type = type;
    if (type === 'Normal') {
      const targetName = get('TargetName');
      if (!targetName) return LoginStatus.MISSING_PARAMETER;
      // iSCSI names compare case-insensitively (RFC 7143 4.2.7.2: they are normalised to lower case).
      if (targetName.toLowerCase() !== this.policy.targetName.toLowerCase())
        return LoginStatus.TARGET_NOT_FOUND;
    }
    const access = await this.policy.authorize(initiatorName);
    if (access === undefined) return LoginStatus.AUTHORIZATION_FAILURE;
    this.access = access;
    return undefined;
  }
}
