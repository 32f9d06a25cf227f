import type { KeyValue } from './text-keys.js';

/** Operational parameters of a session after login (RFC 7143 13). */
export interface SessionParams {
  headerDigest: boolean;
  dataDigest: boolean;
  maxConnections: number;
  initialR2T: boolean;
  immediateData: boolean;
  /** The initiator's MaxRecvDataSegmentLength: the largest data segment we may send. */
  initiatorMaxRecvDataSegmentLength: number;
  maxBurstLength: number;
  firstBurstLength: number;
  defaultTime2Wait: number;
  defaultTime2Retain: number;
  maxOutstandingR2T: number;
  dataPduInOrder: boolean;
  dataSequenceInOrder: boolean;
  errorRecoveryLevel: number;
}

/** What this target supports or prefers; the negotiation outcome never exceeds these. */
export interface TargetLimits {
  /** Declared to the initiator: the largest data segment we accept. */
  maxRecvDataSegmentLength: number;
  maxBurstLength: number;
  firstBurstLength: number;
  maxOutstandingR2T: number;
  initialR2T: boolean;
  immediateData: boolean;
  defaultTime2Wait: number;
  defaultTime2Retain: number;
}

export const DEFAULT_TARGET_LIMITS: TargetLimits = {
  maxRecvDataSegmentLength: 262144,
  maxBurstLength: 16776192,
  firstBurstLength: 262144,
  maxOutstandingR2T: 8,
  // No InitialR2T: initiators may send a first burst unsolicited, which saves a round trip per write.
  initialR2T: false,
  immediateData: true,
  defaultTime2Wait: 2,
  defaultTime2Retain: 0,
};

/** The values RFC 7143 prescribes when a key is never negotiated. */
export function rfcDefaults(): SessionParams {
  return {
    headerDigest: false,
    dataDigest: false,
    maxConnections: 1,
    initialR2T: true,
    immediateData: true,
    initiatorMaxRecvDataSegmentLength: 8192,
    maxBurstLength: 262144,
    firstBurstLength: 65536,
    defaultTime2Wait: 2,
    defaultTime2Retain: 20,
    maxOutstandingR2T: 1,
    dataPduInOrder: true,
    dataSequenceInOrder: true,
    errorRecoveryLevel: 0,
  };
}

const MAX_24 = 16777215;

type Outcome = string | undefined;
type KeyRule = (value: string, p: SessionParams, limits: TargetLimits) => Outcome;

function parseNumber(value: string): number | undefined {
  if (/^\d+$/.test(value)) return Number(value);
  if (/^0x[0-9a-f]+$/i.test(value)) return parseInt(value.slice(2), 16);
  return undefined;
}

function numeric(
  min: number,
  max: number,
  apply: (n: number, p: SessionParams, l: TargetLimits) => number | undefined,
): KeyRule {
  return (value, p, l) => {
    const n = parseNumber(value);
    if (n === undefined || n < min || n > max) return 'Reject';
    const result = apply(n, p, l);
    return result === undefined ? undefined : String(result);
  };
}

function boolean(apply: (offer: boolean, p: SessionParams, l: TargetLimits) => boolean): KeyRule {
  return (value, p, l) => {
    if (value !== 'Yes' && value !== 'No') return 'Reject';
    return apply(value === 'Yes', p, l) ? 'Yes' : 'No';
  };
}

function digest(set: (on: boolean, p: SessionParams) => void): KeyRule {
  return (value, p) => {
    // The initiator lists choices in its order of preference; take the first we implement.
    const choice = value.split(',').find((v) => v === 'CRC32C' || v === 'None');
    if (!choice) return 'Reject';
    set(choice === 'CRC32C', p);
    return choice;
  };
}

const RULES: Record<string, KeyRule> = {
  HeaderDigest: digest((on, p) => (p.headerDigest = on)),
  DataDigest: digest((on, p) => (p.dataDigest = on)),
  // One connection per session: MC/S buys nothing over loopback-class links and complicates ordering.
  MaxConnections: numeric(1, 65535, (_n, p) => (p.maxConnections = 1)),
  InitialR2T: boolean((offer, p, l) => (p.initialR2T = offer || l.initialR2T)),
  ImmediateData: boolean((offer, p, l) => (p.immediateData = offer && l.immediateData)),
  MaxRecvDataSegmentLength: numeric(512, MAX_24, (n, p) => {
    p.initiatorMaxRecvDataSegmentLength = n;
    return undefined;
  }),
  MaxBurstLength: numeric(512, MAX_24, (n, p, l) => (p.maxBurstLength = Math.min(n, l.maxBurstLength))),
  FirstBurstLength: numeric(512, MAX_24, (n, p, l) => (p.firstBurstLength = Math.min(n, l.firstBurstLength))),
  DefaultTime2Wait: numeric(0, 3600, (n, p, l) => (p.defaultTime2Wait = Math.max(n, l.defaultTime2Wait))),
  DefaultTime2Retain: numeric(
    0,
    3600,
    (n, p, l) => (p.defaultTime2Retain = Math.min(n, l.defaultTime2Retain)),
  ),
  MaxOutstandingR2T: numeric(1, 65535, (n, p, l) => (p.maxOutstandingR2T = Math.min(n, l.maxOutstandingR2T))),
  DataPDUInOrder: boolean((_offer, p) => (p.dataPduInOrder = true)),
  DataSequenceInOrder: boolean((_offer, p) => (p.dataSequenceInOrder = true)),
  // Error recovery beyond session restart (level 0) is not implemented.
  ErrorRecoveryLevel: numeric(0, 2, (_n, p) => (p.errorRecoveryLevel = 0)),
  IFMarker: boolean(() => false),
  OFMarker: boolean(() => false),
  IFMarkInt: () => 'Irrelevant',
  OFMarkInt: () => 'Irrelevant',
  TaskReporting: (value) => (value.split(',').includes('RFC3720') ? 'RFC3720' : 'Reject'),
};

/** Keys that describe data transfer, which a discovery session has none of (RFC 7143 13). */
const IRRELEVANT_FOR_DISCOVERY = new Set([
  'MaxConnections',
  'InitialR2T',
  'ImmediateData',
  'MaxBurstLength',
  'FirstBurstLength',
  'MaxOutstandingR2T',
  'DataPDUInOrder',
  'DataSequenceInOrder',
]);

/** Declarative keys the login code consumes; they need no answer. */
const DECLARATIVE = new Set(['InitiatorName', 'InitiatorAlias', 'TargetName', 'SessionType', 'TargetAlias']);

/**
 * Answers the operational keys of one login request. Values accumulate over the login's
 * requests; `result()` applies the cross-key rules once the login completes.
 */
export class Negotiator {
  readonly params: SessionParams = rfcDefaults();
  private declared = false;

  constructor(
    private readonly limits: TargetLimits,
    private readonly discovery: boolean,
  ) {}

  /** `declare` false holds back our declarations (sent with the next answer that allows them). */
  respond(pairs: readonly KeyValue[], declare = true): KeyValue[] {
    const out: KeyValue[] = [];
    for (const [key, value] of pairs) {
      if (DECLARATIVE.has(key) || key === 'AuthMethod') continue;
      const rule = RULES[key];
      if (!rule) {
        out.push([key, 'NotUnderstood']);
        continue;
      }
      if (this.discovery && IRRELEVANT_FOR_DISCOVERY.has(key)) {
        out.push([key, 'Irrelevant']);
        continue;
      }
      const answer = rule(value, this.params, this.limits);
      if (answer !== undefined) out.push([key, answer]);
    }
    // Declared once: without it the initiator must assume 8192 bytes per data segment.
    if (declare && !this.declared) {
      this.declared = true;
      out.push(['MaxRecvDataSegmentLength', String(this.limits.maxRecvDataSegmentLength)]);
    }
    return out;
  }

  result(): SessionParams {
    const p = { ...this.params };
    // FirstBurstLength must not exceed MaxBurstLength (RFC 7143 13.14).
    p.firstBurstLength = Math.min(p.firstBurstLength, p.maxBurstLength);
    return p;
  }
}
