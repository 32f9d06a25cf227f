import { ChapExchange, type ChapCredentials } from './chap.js';
import type { KeyValue } from './text-keys.js';

/** Keys of the security negotiation stage: the authentication method and CHAP's own. */
export function isSecurityKey([key]: KeyValue): boolean {
  return key === 'AuthMethod' || key.startsWith('CHAP_');
}

/**
 * The security negotiation stage of one login (RFC 7143 6.3, 12). An initiator without CHAP
 * credentials keeps AuthMethod=None (its IQN on the allow-list is the whole check); one with
 * credentials must choose CHAP and complete the exchange before it may leave this stage.
 */
export class SecurityStage {
  private readonly chap: ChapExchange | undefined;
  private chosen = false;

  constructor(credentials: ChapCredentials | undefined) {
    this.chap = credentials ? new ChapExchange(credentials) : undefined;
  }

  /** Whether this login authenticates with CHAP. */
  get usesChap(): boolean {
    return this.chap !== undefined;
  }

  /** Whether the initiator may move on to the operational stage or full feature phase. */
  get complete(): boolean {
    return !this.chap || this.chap.done;
  }

  /**
   * Answers the security keys of one request; `failure` ends the login (AUTHENTICATION FAILURE),
   * `wrongAnswer` when it was the CHAP exchange itself that failed (what guessing looks like).
   */
  respond(pairs: readonly KeyValue[]): { reply: KeyValue[]; failure?: string; wrongAnswer?: boolean } {
    const offer = pairs.find(([k]) => k === 'AuthMethod')?.[1]?.split(',');
    if (!this.chap) {
      if (offer === undefined) return { reply: [] };
      if (!offer.includes('None'))
        return {
          reply: [],
          failure: `the initiator offers AuthMethod=${offer.join(',').slice(0, 64)} but no CHAP is set for it; register CHAP credentials or let it use None`,
        };
      return { reply: [['AuthMethod', 'None']] };
    }
    const reply: KeyValue[] = [];
    if (!this.chosen) {
      if (offer === undefined || !offer.includes('CHAP'))
        return {
          reply: [],
          failure: `CHAP is required for this initiator but it offered AuthMethod=${(offer ?? ['(nothing)']).join(',').slice(0, 64)}; set its CHAP credentials`,
        };
      this.chosen = true;
      reply.push(['AuthMethod', 'CHAP']);
      // CHAP_A normally comes in the next request; some initiators send it along.
      if (!pairs.some(([k]) => k.startsWith('CHAP_'))) return { reply };
    }
    const step = this.chap.step(pairs.filter(([k]) => k.startsWith('CHAP_')));
    if (step.failure !== undefined) return { reply: [], failure: step.failure, wrongAnswer: true };
    return { reply: [...reply, ...step.reply] };
  }
}
