import { describe, expect, it } from 'vitest';
import { CredentialRecheck } from './event-stream.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CredentialRecheck: the credential checks of every open event stream on one timer', () => {
  it('checks each distinct token once a round, however many streams hold it', async () => {
    const calls: (string | undefined)[] = [];
    const recheck = new CredentialRecheck(async (token) => {
      calls.push(token);
      return true;
    }, 20);
    const leave = [
      ...Array.from({ length: 500 }, () => recheck.add('a', () => undefined)),
      recheck.add('b', () => undefined),
    ];
    expect(recheck.tokens).toBe(2);
    await sleep(70);
    for (const f of leave) f();
    const rounds = calls.filter((t) => t === 'b').length;
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(calls.filter((t) => t === 'a').length).toBe(rounds);
    // Every stream gone: no more checks.
    expect(recheck.tokens).toBe(0);
    const before = calls.length;
    await sleep(60);
    expect(calls.length).toBe(before);
  });

  it('ends every stream of a revoked token and none of the others', async () => {
    let revoked = false;
    const recheck = new CredentialRecheck(async (token) => !(revoked && token === 'a'), 20);
    const ended: string[] = [];
    recheck.add('a', () => ended.push('a1'));
    recheck.add('a', () => ended.push('a2'));
    const leaveB = recheck.add('b', () => ended.push('b'));
    await sleep(50);
    expect(ended).toEqual([]);
    revoked = true;
    await sleep(50);
    expect(ended.slice(0, 2).sort()).toEqual(['a1', 'a2']);
    expect(ended).not.toContain('b');
    leaveB();
    recheck.stop();
  });

  it('does not start a check of a token while the last one is still running', async () => {
    let running = 0;
    let most = 0;
    const recheck = new CredentialRecheck(async () => {
      most = Math.max(most, ++running);
      await sleep(70);
      running--;
      return true;
    }, 10);
    const leave = recheck.add('a', () => undefined);
    await sleep(100);
    leave();
    expect(most).toBe(1);
  });
});
