import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { KeyValue } from './text-keys.js';

/**
 * CHAP credentials of one initiator (RFC 7143 12.1.3). `username`/`secret` authenticate the
 * initiator; with `mutual_username`/`mutual_secret` the target also answers the initiator's
 * challenge (mutual CHAP). Field names follow the control protocol and the API.
 */
export interface ChapCredentials {
  username: string;
  secret: string;
  mutual_username?: string;
  mutual_secret?: string;
}

/** CHAP_A value of CHAP with MD5 (RFC 1994); the only algorithm RFC 7143 requires. */
export const CHAP_MD5 = '5';
/** Our challenge: as long as the MD5 digest, fresh for every login (RFC 7143 12.1.3). */
const CHALLENGE_BYTES = 16;
/** The longest challenge we answer: bounds the work an unauthenticated peer can ask for. */
const MAX_PEER_CHALLENGE_BYTES = 1024;
const MD5_BYTES = 16;

/**
 * Decodes an iSCSI binary value (RFC 7143 6.1): `0x`/`0X` hex (an odd digit count means a
 * leading zero) or `0b`/`0B` base64. undefined when malformed or empty.
 */
export function decodeBinary(value: string): Buffer | undefined {
  const prefix = value.slice(0, 2).toLowerCase();
  const body = value.slice(2);
  if (prefix === '0x') {
    if (!/^[0-9a-fA-F]+$/.test(body)) return undefined;
    return Buffer.from(body.length % 2 ? `0${body}` : body, 'hex');
  }
  if (prefix === '0b') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) return undefined;
    const bytes = Buffer.from(body, 'base64');
    return bytes.length > 0 ? bytes : undefined;
  }
  return undefined;
}

/** CHAP response (RFC 1994 4.1): MD5 over the identifier octet, the secret and the challenge. */
export function chapResponse(identifier: number, secret: string, challenge: Buffer): Buffer {
  return createHash('md5')
    .update(Buffer.from([identifier]))
    .update(Buffer.from(secret, 'utf8'))
    .update(challenge)
    .digest();
}

/** One step's outcome: keys to answer, or why the login must end with AUTHENTICATION FAILURE. */
export type ChapStep = { reply: KeyValue[]; failure?: undefined } | { failure: string };

/**
 * The target's side of one CHAP exchange: CHAP_A in, CHAP_A/CHAP_I/CHAP_C out; then CHAP_N/
 * CHAP_R in (plus CHAP_I/CHAP_C for mutual CHAP), checked, and for mutual CHAP answered with
 * the target's own CHAP_N/CHAP_R. Failure reasons go to the log and never carry a secret.
 */
export class ChapExchange {
  private state: 'algorithm' | 'response' | 'done' = 'algorithm';
  private identifier = 0;
  private challenge = Buffer.alloc(0);

  constructor(private readonly credentials: ChapCredentials) {}

  get done(): boolean {
    return this.state === 'done';
  }

  step(pairs: readonly KeyValue[]): ChapStep {
    const get = (key: string) => pairs.find(([k]) => k === key)?.[1];
    if (this.state === 'algorithm') {
      const offered = get('CHAP_A');
      if (offered === undefined) return { failure: 'the initiator sent no CHAP_A after choosing CHAP' };
      if (!offered.split(',').includes(CHAP_MD5))
        return {
          failure: `CHAP algorithm(s) ${offered.slice(0, 64)} offered; only MD5 (CHAP_A=5) is supported`,
        };
      this.identifier = randomInt(256);
      this.challenge = randomBytes(CHALLENGE_BYTES);
      this.state = 'response';
      return {
        reply: [
          ['CHAP_A', CHAP_MD5],
          ['CHAP_I', String(this.identifier)],
          ['CHAP_C', `0x${this.challenge.toString('hex')}`],
        ],
      };
    }
    if (this.state === 'done') return { reply: [] };
    return this.verify(get('CHAP_N'), get('CHAP_R'), get('CHAP_I'), get('CHAP_C'));
  }

  private verify(
    name: string | undefined,
    response: string | undefined,
    peerId: string | undefined,
    peerChallenge: string | undefined,
  ): ChapStep {
    const { username, secret, mutual_username: mutualName, mutual_secret: mutualSecret } = this.credentials;
    if (name === undefined || response === undefined)
      return { failure: 'the initiator did not answer the CHAP challenge (no CHAP_N/CHAP_R)' };
    const got = decodeBinary(response);
    const expected = chapResponse(this.identifier, secret, this.challenge);
    // Compared in constant time, and always: the time taken says nothing about the secret.
    const responseOk = got?.length === MD5_BYTES && timingSafeEqual(got, expected);
    if (name !== username)
      return { failure: 'CHAP_N is not the CHAP username registered for this initiator' };
    if (!responseOk)
      return { failure: 'CHAP_R is wrong: the initiator does not hold the registered CHAP secret' };

    const wantsMutual = peerId !== undefined || peerChallenge !== undefined;
    if (!wantsMutual) {
      // As LIO does: mutual CHAP set up for a host that does not check the target is a misconfiguration.
      if (mutualSecret)
        return {
          failure:
            'mutual CHAP is set for this initiator but it did not challenge the target (CHAP_I/CHAP_C)',
        };
      this.state = 'done';
      return { reply: [] };
    }
    if (!mutualSecret || !mutualName)
      return { failure: 'the initiator asks the target to authenticate, but no mutual CHAP is set for it' };
    const id = peerId !== undefined && /^\d{1,3}$/.test(peerId) ? Number(peerId) : -1;
    const challenge = peerChallenge === undefined ? undefined : decodeBinary(peerChallenge);
    if (id < 0 || id > 255 || !challenge || challenge.length > MAX_PEER_CHALLENGE_BYTES)
      return { failure: 'the initiator sent a malformed CHAP_I or CHAP_C for mutual CHAP' };
    // Reflection attack: our own challenge sent back would make us compute the answer for it.
    if (challenge.equals(this.challenge))
      return { failure: "the initiator's CHAP challenge repeats the target's (reflection attempt)" };
    this.state = 'done';
    return {
      reply: [
        ['CHAP_N', mutualName],
        ['CHAP_R', `0x${chapResponse(id, mutualSecret, challenge).toString('hex')}`],
      ],
    };
  }
}
