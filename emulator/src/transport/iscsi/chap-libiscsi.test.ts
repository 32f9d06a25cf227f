import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibIscsiSession } from '../../testing/libiscsi.js';
import type { ChapCredentials } from './chap.js';
import { TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';

const run = promisify(execFile);
const ONE_WAY_HOST = 'iqn.2024-01.org.vtl.test:oneway';
const MUTUAL_HOST = 'iqn.2024-01.org.vtl.test:mutual';
const CREDENTIALS: Record<string, ChapCredentials> = {
  [ONE_WAY_HOST]: { username: 'oneway', secret: 'OneWaySecret12' },
  [MUTUAL_HOST]: {
    username: 'mutual',
    secret: 'MutualHostSecret',
    mutual_username: 'vtl-target',
    mutual_secret: 'TargetSecret16ch',
  },
};

let t: TestTarget;
let portal: string;

beforeAll(async () => {
  t = await startTestTarget({ chap: (name) => CREDENTIALS[name] });
  portal = `127.0.0.1:${t.target.port}`;
});

afterAll(() => t.target.stop());

/** libiscsi 1.19 (Debian), a real initiator: its CHAP and ours must agree byte for byte. */
describe('CHAP with libiscsi', () => {
  it('iscsi-ls logs in with one-way CHAP from the URL and is refused with a wrong secret', async () => {
    const url = (secret: string) => `iscsi://oneway%${secret}@${portal}`;
    const { stdout } = await run('iscsi-ls', ['-i', ONE_WAY_HOST, '-s', url('OneWaySecret12')], {
      timeout: 20_000,
    });
    expect(stdout).toContain(`Target:${TEST_TARGET}`);
    expect(stdout).toMatch(/Lun:1\s+Type:MEDIA_CHANGER/);
    const refusal = /Authentication failure\(513\)/;
    await expect(
      run('iscsi-ls', ['-i', ONE_WAY_HOST, '-s', url('WrongSecret123')], { timeout: 20_000 }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(refusal) });
    // Without credentials libiscsi offers AuthMethod=None only: refused too.
    await expect(
      run('iscsi-ls', ['-i', ONE_WAY_HOST, '-s', `iscsi://${portal}`], { timeout: 20_000 }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(refusal) });
  });

  it('a normal session logs in with mutual CHAP and checks the target (koffi)', async () => {
    const { username, secret, mutual_username, mutual_secret } = CREDENTIALS[MUTUAL_HOST]!;
    const session = await LibIscsiSession.connect(portal, TEST_TARGET, MUTUAL_HOST, {
      chap: { username, secret },
      targetChap: { username: mutual_username!, secret: mutual_secret! },
    });
    const inquiry = await session.command(1, [0x12, 0, 0, 0, 96, 0], { dataInLength: 96 });
    expect(inquiry.status).toBe(0);
    expect(inquiry.data[0]! & 0x1f).toBe(8);
    await session.close();
    // libiscsi itself refuses a target that answers with another secret than it expects.
    await expect(
      LibIscsiSession.connect(portal, TEST_TARGET, MUTUAL_HOST, {
        chap: { username, secret },
        targetChap: { username: mutual_username!, secret: 'NotTheTargets16' },
      }),
    ).rejects.toThrow(/CHAP_R|authenticat/i);
    // And the target refuses a host holding a wrong secret of its own.
    await expect(
      LibIscsiSession.connect(portal, TEST_TARGET, MUTUAL_HOST, {
        chap: { username, secret: 'WrongHostSecret1' },
        targetChap: { username: mutual_username!, secret: mutual_secret! },
      }),
    ).rejects.toThrow(/login|fail|authent/i);
  });

  it('discovery takes the same credentials', async () => {
    const targets = await LibIscsiSession.discover(portal, ONE_WAY_HOST, {
      chap: { username: 'oneway', secret: 'OneWaySecret12' },
    });
    expect(targets.map((x) => x.targetName)).toEqual([TEST_TARGET]);
    await expect(LibIscsiSession.discover(portal, ONE_WAY_HOST)).rejects.toThrow(/discovery/);
  });
});
