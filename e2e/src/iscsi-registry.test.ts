import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';

const HOST1 = 'iqn.2026-11.test.host:one';
const HOST2 = 'iqn.2026-11.test.host:two';
const TARGET = 'iqn.2026-11.io.vtl:node1';
const REPORT_LUNS = [0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];
const INQUIRY = [0x12, 0, 0, 0, 96, 0];

/** The LUN numbers REPORT LUNS lists (single-level addressing). */
async function reportLuns(session: LibIscsiSession): Promise<number[]> {
  const res = await session.command(0, REPORT_LUNS, { dataInLength: 256 });
  expect(res.status).toBe(0);
  const count = res.data.readUInt32BE(0) / 8;
  return Array.from({ length: count }, (_, i) => res.data.readUInt16BE(8 + 8 * i) & 0x3fff);
}

describe('the initiator registry governs the iSCSI target, live', () => {
  let app: Appliance;
  let portal: string;
  const sessions: LibIscsiSession[] = [];
  const connect = async (iqn: string) => {
    const s = await LibIscsiSession.connect(portal, TARGET, iqn);
    sessions.push(s);
    return s;
  };
  const initiator = async (iqn: string) =>
    (await app.api.get('/api/targets')).body.initiators.find((i: { wwpn: string }) => i.wwpn === iqn);
  let libA: number;
  let libB: number;

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_ISCSI_OPEN: '0' } });
    portal = `127.0.0.1:${app.ports.iscsi}`;
    const first = (await app.api.get('/api/pools')).body[0];
    const second = await app.api.post('/api/pools', {
      name: 'second',
      path: path.join(app.stateDir, 'pools', 'p2'),
    });
    expect(second.status).toBe(201);
    await waitFor(
      async () =>
        (await app.api.get('/api/pools')).body.find((p: { id: number }) => p.id === second.body.id)?.state ===
        'active',
      { timeoutMs: 30_000 },
    );
    const declare = async (pool: number, prefix: string, drives: number) => {
      const res = await app.api.post('/api/libraries', {
        product: '03584L32',
        drive_product: 'ULT3580-TD9',
        num_drives: drives,
        label_prefix: prefix,
        pool_id: pool,
      });
      expect(res.status, res.text).toBe(201);
      return res.body.library as number;
    };
    libA = await declare(first.id, 'REA', 2);
    libB = await declare(second.body.id, 'REB', 1);
    await app.apply();
  }, 180_000);
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    await app?.destroy();
  });

  it('refuses an initiator the registry does not know', async () => {
    await expect(LibIscsiSession.connect(portal, TARGET, HOST1)).rejects.toThrow(/login|fail|author/i);
  });

  it('registering an IQN lets it in with exactly the LUNs of its libraries', async () => {
    const res = await app.api.post('/api/targets/acls', {
      wwpn: HOST1,
      fabric: 'iscsi',
      alias: 'backup-1',
      libraries: [libA],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.error).toBeUndefined();
    expect(res.body.initiators).toEqual([
      expect.objectContaining({ wwpn: HOST1, fabric: 'iscsi', libraries: String(libA), applied: true }),
    ]);
    // Library A is the lower id: its changer and two drives are LUNs 0-2; B's are 3-4.
    const one = await connect(HOST1);
    expect(await reportLuns(one)).toEqual([0, 1, 2]);
    const outside = await one.command(3, INQUIRY, { dataInLength: 96 });
    expect(outside.data[0]! >> 5).toBe(0b011); // not mapped for this initiator

    expect((await app.api.post('/api/targets/acls', { wwpn: HOST2, fabric: 'iscsi' })).status).toBe(200);
    const two = await connect(HOST2);
    expect(await reportLuns(two)).toEqual([0, 1, 2, 3, 4]);
    await waitFor(async () => (await initiator(HOST1))?.logged_in === true, { timeoutMs: 10_000 });
  });

  it('a scope change applies to the live session and leaves other sessions running', async () => {
    const [one, two] = sessions as [LibIscsiSession, LibIscsiSession];
    const res = await app.api.put(`/api/targets/acls/${HOST1}`, { libraries: [libB] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.initiators.find((i: { wwpn: string }) => i.wwpn === HOST1)).toMatchObject({
      libraries: String(libB),
      applied: true,
      logged_in: true,
    });
    expect(await reportLuns(one)).toEqual([3, 4]); // same session, no new login
    expect(await reportLuns(two)).toEqual([0, 1, 2, 3, 4]);

    expect((await app.api.put(`/api/targets/acls/${HOST1}`, { libraries: [] })).status).toBe(200);
    expect(await reportLuns(one)).toEqual([]);
    expect(await reportLuns(two)).toEqual([0, 1, 2, 3, 4]);
  });

  it('deregistering refuses a logged-in initiator without force=1, and with it drops only that host', async () => {
    const [, two] = sessions as [LibIscsiSession, LibIscsiSession];
    const refused = await app.api.delete(`/api/targets/acls/${HOST1}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/live session.*force=1/);
    expect(await initiator(HOST1)).toBeDefined();

    const res = await app.api.delete(`/api/targets/acls/${HOST1}?force=1`);
    expect(res.status).toBe(200);
    expect(res.body.initiators.map((i: { wwpn: string }) => i.wwpn)).toEqual([HOST2]);
    await expect(LibIscsiSession.connect(portal, TARGET, HOST1)).rejects.toThrow(/login|fail|author/i);
    expect(await reportLuns(two)).toEqual([0, 1, 2, 3, 4]);
    await waitFor(async () => (await app.api.get('/api/status')).body.fabrics.iscsi.sessions === 1, {
      timeoutMs: 10_000,
    });
    const metrics = await app.plain.get('/metrics');
    expect(metrics.text).toMatch(/vtl_target_sessions_active\{fabric="iscsi"\} 1/);
  });
});
