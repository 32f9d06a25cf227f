import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';

const run = promisify(execFile);
let t: TestTarget;
let portal: string;

beforeAll(async () => {
  t = await startTestTarget();
  portal = `iscsi://127.0.0.1:${t.target.port}`;
});

afterAll(() => t.target.stop());

/** Debian libiscsi-bin, a real initiator outside this process. */
describe('libiscsi command line tools against the target', () => {
  it('iscsi-ls lists the target and its LUNs with device types', async () => {
    const { stdout } = await run('iscsi-ls', ['-s', portal], { timeout: 20_000 });
    expect(stdout).toContain(`Target:${TEST_TARGET} Portal:127.0.0.1:${t.target.port},1`);
    expect(stdout).toMatch(/Lun:0\s+Type:DIRECT_ACCESS \(Size:\d+M\)/);
    expect(stdout).toMatch(/Lun:1\s+Type:MEDIA_CHANGER/);
  });

  it('iscsi-inq shows standard INQUIRY data', async () => {
    const { stdout } = await run('iscsi-inq', [`${portal}/${TEST_TARGET}/1`], { timeout: 20_000 });
    expect(stdout).toContain('Peripheral Device Type:MEDIA_CHANGER');
    expect(stdout).toContain('Removable:1');
    expect(stdout).toContain('Vendor:IBM');
    expect(stdout).toContain('Product:03584L32');
    expect(stdout).toContain('Revision:0100');
  });

  it('iscsi-inq shows the unit serial number and identification VPD pages', async () => {
    const serial = await run('iscsi-inq', ['--evpd=1', '--pagecode=128', `${portal}/${TEST_TARGET}/1`]);
    expect(serial.stdout).toContain('Unit Serial Number:[0000013100410401]');
    const ids = await run('iscsi-inq', ['--evpd=1', '--pagecode=131', `${portal}/${TEST_TARGET}/1`]);
    expect(ids.stdout).toContain('Designator:[IBM     03584L32        0000013100410401]');
    const pages = await run('iscsi-inq', ['--evpd=1', '--pagecode=0', `${portal}/${TEST_TARGET}/1`]);
    expect(pages.stdout).toMatch(/0x80 UNIT_SERIAL_NUMBER[\s\S]*0x83 DEVICE_IDENTIFICATION/);
  });

  it.each([
    ['the iSCSI protocol suite', 'iSCSI.*'],
    ['the reservation tests (persistent, and RESERVE(6))', 'ALL.Prin*,ALL.Prout*,ALL.Reserve6*'],
  ])('passes %s of iscsi-test-cu', async (_what, selection) => {
    const { stdout } = await run(
      'iscsi-test-cu',
      ['--dataloss', `--test=${selection}`, `${portal}/${TEST_TARGET}/0`],
      { timeout: 120_000, cwd: '/tmp' },
    );
    const tests = /tests\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/.exec(stdout);
    expect(tests, stdout).not.toBeNull();
    const [, total, ran, passed, failed] = tests!.map(Number);
    expect(total).toBeGreaterThan(0);
    expect({ total, ran, passed, failed }).toEqual({ total, ran: total, passed: total, failed: 0 });
  });
});
