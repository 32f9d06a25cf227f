import { describe, expect, it } from 'vitest';
import { Asc, ScsiStatus } from './constants.js';
import { PersistentReservations, PrType } from './persistent-reservations.js';
import { parseSense, type ScsiError } from './sense.js';

const A = 'iqn.2024-01.test:a,i,0x800000000001';
const B = 'iqn.2024-01.test:b,i,0x800000000001';
const C = 'iqn.2024-01.test:c,i,0x800000000001';

/** The status (and sense) a refused call ends the command with. */
function refusal(call: () => unknown): { status: number; asc?: number; ascq?: number } {
  try {
    call();
  } catch (err) {
    const e = err as ScsiError;
    return e.sense ? { status: e.status, ...parseSense(e.sense) } : { status: e.status };
  }
  throw new Error('expected a refusal');
}

function registered(...nexuses: Array<[string, bigint]>): PersistentReservations {
  const pr = new PersistentReservations();
  for (const [n, k] of nexuses) pr.register(n, 0n, k, false);
  return pr;
}

describe('persistent reservations (SPC-4 5.13)', () => {
  it('registers, changes and drops keys with the right key only; the generation counts each change', () => {
    const pr = new PersistentReservations();
    expect(pr.register(A, 0n, 0n, false)).toEqual([]);
    expect(pr.generation).toBe(0);
    pr.register(A, 0n, 0xaan, false);
    expect(pr.generation).toBe(1);
    expect(refusal(() => pr.register(B, 0x99n, 0xbbn, false))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect(refusal(() => pr.register(A, 0x99n, 0xa1n, false))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect([...pr.registrations()]).toEqual([[A, 0xaan]]);
    pr.register(A, 0x99n, 0xa1n, true);
    expect(pr.registrations().get(A)).toBe(0xa1n);
    pr.register(A, 0xa1n, 0n, false);
    expect(pr.registrations().has(A)).toBe(false);
    expect(pr.generation).toBe(3);
  });

  it('gives each type its access: holders all, registrants per type, others read or nothing', () => {
    const cases: Array<[number, { registrant: string; other: string }]> = [
      [PrType.WRITE_EXCLUSIVE, { registrant: 'read', other: 'read' }],
      [PrType.EXCLUSIVE_ACCESS, { registrant: 'none', other: 'none' }],
      [PrType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, { registrant: 'all', other: 'read' }],
      [PrType.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, { registrant: 'all', other: 'none' }],
      [PrType.WRITE_EXCLUSIVE_ALL_REGISTRANTS, { registrant: 'all', other: 'read' }],
      [PrType.EXCLUSIVE_ACCESS_ALL_REGISTRANTS, { registrant: 'all', other: 'none' }],
    ];
    for (const [type, expected] of cases) {
      const pr = registered([A, 1n], [B, 2n]);
      expect(pr.access(C)).toBe('all');
      pr.reserve(A, 1n, type);
      expect({ type, holder: pr.access(A), registrant: pr.access(B), other: pr.access(C) }).toEqual({
        type,
        holder: 'all',
        ...expected,
      });
    }
  });

  it('refuses a second reservation, keeps the holder on a repeat, and releases only the same type', () => {
    const pr = registered([A, 1n], [B, 2n]);
    expect(refusal(() => pr.reserve(C, 0n, PrType.EXCLUSIVE_ACCESS))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    pr.reserve(A, 1n, PrType.EXCLUSIVE_ACCESS);
    pr.reserve(A, 1n, PrType.EXCLUSIVE_ACCESS);
    expect(refusal(() => pr.reserve(A, 1n, PrType.WRITE_EXCLUSIVE))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect(refusal(() => pr.reserve(B, 2n, PrType.EXCLUSIVE_ACCESS))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect(pr.release(B, 2n, PrType.EXCLUSIVE_ACCESS)).toEqual([]);
    expect(pr.reservation).toEqual({ holder: A, type: PrType.EXCLUSIVE_ACCESS });
    const wrongType = refusal(() => pr.release(A, 1n, PrType.WRITE_EXCLUSIVE));
    expect(wrongType).toMatchObject({ status: ScsiStatus.CHECK_CONDITION, asc: 0x26, ascq: 0x04 });
    expect(pr.release(A, 1n, PrType.EXCLUSIVE_ACCESS)).toEqual([]);
    expect(pr.reservation).toBeUndefined();
    expect(pr.generation).toBe(2);
  });

  it('tells the other registrants when a registrants-only reservation is released or its holder leaves', () => {
    const pr = registered([A, 1n], [B, 2n], [C, 3n]);
    pr.reserve(A, 1n, PrType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY);
    expect(pr.release(A, 1n, PrType.WRITE_EXCLUSIVE_REGISTRANTS_ONLY)).toEqual([
      { nexus: B, asc: Asc.RESERVATIONS_RELEASED },
      { nexus: C, asc: Asc.RESERVATIONS_RELEASED },
    ]);
    pr.reserve(B, 2n, PrType.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY);
    expect(pr.register(B, 2n, 0n, false)).toEqual([
      { nexus: A, asc: Asc.RESERVATIONS_RELEASED },
      { nexus: C, asc: Asc.RESERVATIONS_RELEASED },
    ]);
    expect(pr.reservation).toBeUndefined();
  });

  it('keeps an all-registrants reservation until its last registrant leaves', () => {
    const pr = registered([A, 1n], [B, 2n]);
    pr.reserve(A, 1n, PrType.EXCLUSIVE_ACCESS_ALL_REGISTRANTS);
    expect(pr.isHolder(B)).toBe(true);
    pr.register(A, 1n, 0n, false);
    expect(pr.reservation?.type).toBe(PrType.EXCLUSIVE_ACCESS_ALL_REGISTRANTS);
    expect(pr.isHolder(B)).toBe(true);
    pr.register(B, 2n, 0n, false);
    expect(pr.reservation).toBeUndefined();
  });

  it('preempts the holder: its registration goes, the requester reserves, the victim hears of it', () => {
    const pr = registered([A, 1n], [B, 2n], [C, 3n]);
    pr.reserve(A, 1n, PrType.EXCLUSIVE_ACCESS);
    expect(pr.preempt(B, 2n, 1n, PrType.WRITE_EXCLUSIVE)).toEqual([
      { nexus: A, asc: Asc.REGISTRATIONS_PREEMPTED },
      { nexus: C, asc: Asc.RESERVATIONS_RELEASED },
    ]);
    expect(pr.reservation).toEqual({ holder: B, type: PrType.WRITE_EXCLUSIVE });
    expect([...pr.registrations().keys()]).toEqual([B, C]);
    // A non-holder's key only removes that registration; the reservation stays.
    expect(pr.preempt(B, 2n, 3n, PrType.WRITE_EXCLUSIVE)).toEqual([
      { nexus: C, asc: Asc.REGISTRATIONS_PREEMPTED },
    ]);
    expect(pr.reservation).toEqual({ holder: B, type: PrType.WRITE_EXCLUSIVE });
    // The holder may preempt its own key to change the type, and keeps its registration.
    pr.preempt(B, 2n, 2n, PrType.EXCLUSIVE_ACCESS);
    expect(pr.reservation).toEqual({ holder: B, type: PrType.EXCLUSIVE_ACCESS });
    expect(pr.registrations().has(B)).toBe(true);
  });

  it('refuses a preempt of a key nobody holds, and a zero key without an all-registrants reservation', () => {
    const pr = registered([A, 1n], [B, 2n]);
    const before = pr.generation;
    expect(refusal(() => pr.preempt(B, 2n, 7n, PrType.EXCLUSIVE_ACCESS))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect(refusal(() => pr.preempt(B, 2n, 0n, PrType.EXCLUSIVE_ACCESS))).toMatchObject({
      asc: 0x26,
      ascq: 0,
    });
    expect(refusal(() => pr.preempt(C, 0n, 1n, PrType.EXCLUSIVE_ACCESS))).toEqual({
      status: ScsiStatus.RESERVATION_CONFLICT,
    });
    expect(pr.generation).toBe(before);
    expect([...pr.registrations().keys()]).toEqual([A, B]);
  });

  it('preempting with zero under an all-registrants reservation leaves the requester alone, holding it', () => {
    const pr = registered([A, 1n], [B, 2n], [C, 3n]);
    pr.reserve(A, 1n, PrType.WRITE_EXCLUSIVE_ALL_REGISTRANTS);
    expect(pr.preempt(C, 3n, 0n, PrType.EXCLUSIVE_ACCESS).map((n) => n.nexus)).toEqual([A, B]);
    expect([...pr.registrations().keys()]).toEqual([C]);
    expect(pr.reservation).toEqual({ holder: C, type: PrType.EXCLUSIVE_ACCESS });
  });

  it('clears everything for a registrant and preempts the others', () => {
    const pr = registered([A, 1n], [B, 2n]);
    pr.reserve(A, 1n, PrType.EXCLUSIVE_ACCESS);
    expect(refusal(() => pr.clear(C, 0n))).toEqual({ status: ScsiStatus.RESERVATION_CONFLICT });
    expect(pr.clear(B, 2n)).toEqual([{ nexus: A, asc: Asc.RESERVATIONS_PREEMPTED }]);
    expect(pr.active).toBe(false);
  });
});
