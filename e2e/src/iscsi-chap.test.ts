import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { z } from 'zod';
import { Appliance } from './harness/appliance.js';
import { filesUnder, textsInFiles } from './harness/etcdctl.js';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';

const run = promisify(execFile);
const TARGET = 'iqn.2026-11.io.vtl:node1';
const HOST = 'iqn.2026-11.test.chap:host1';
const PLAIN = 'iqn.2026-11.test.chap:plain';
const STRANGER = 'iqn.2026-11.test.chap:stranger';
const SECRET = 'Host1-Chap-Secret';
const SECRET2 = 'Host1-New-Secret!';
const MUTUAL = 'Target-Mutual-Sec';
const REPORT_LUNS = [0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];

/** Real initiators against the appliance: Debian's iscsi-ls and libiscsi through koffi. */
describe('CHAP per registered iSCSI initiator (one-way and mutual)', () => {
  let app: Appliance;
  let portal: string;
  const sessions: LibIscsiSession[] = [];
  const iscsiLs = (iqn: string, credentials = '') =>
    run('iscsi-ls', ['-i', iqn, '-s', `iscsi://${credentials}${portal}`], { timeout: 30_000 });
  const refusedWith = (status: RegExp) => ({ stderr: expect.stringMatching(status) });
  const lunCount = async (s: LibIscsiSession) => {
    const res = await s.command(0, REPORT_LUNS, { dataInLength: 256 });
    expect(res.status).toBe(0);
    return res.data.readUInt32BE(0) / 8;
  };
  const register = async (body: object) => {
    const res = await app.api.post('/api/targets/acls', body);
    expect(res.status, res.text).toBe(200);
    expect(res.body.error).toBeUndefined();
    return res;
  };
  const change = async (chap: object | null) => {
    const res = await app.api.put(`/api/targets/acls/${HOST}`, { chap });
    expect(res.status, res.text).toBe(200);
    expect(res.body.error).toBeUndefined();
    return res;
  };

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_ISCSI_OPEN: '0' } });
    portal = `127.0.0.1:${app.ports.iscsi}`;
    const pool = (await app.api.get('/api/pools')).body[0];
    const lib = await app.api.post('/api/libraries', {
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 1,
      label_prefix: 'CHP',
      pool_id: pool.id,
    });
    expect(lib.status, lib.text).toBe(201);
    await app.apply();
    // A host without CHAP, logged in throughout: CHAP changes of others must not disturb it.
    await register({ wwpn: PLAIN, fabric: 'iscsi' });
    sessions.push(await LibIscsiSession.connect(portal, TARGET, PLAIN));
  }, 180_000);
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    await app?.destroy();
  });

  it('one-way: iscsi-ls logs in with the secret; a wrong one, none, or an unregistered IQN is refused', async () => {
    const res = await register({ wwpn: HOST, fabric: 'iscsi', chap: { username: 'host1', secret: SECRET } });
    expect(res.body.initiators.find((i: { wwpn: string }) => i.wwpn === HOST)).toMatchObject({
      applied: true,
      chap: { enabled: true, username: 'host1', mutual: false },
    });
    const { stdout } = await iscsiLs(HOST, `host1%${SECRET}@`);
    expect(stdout).toContain(`Target:${TARGET}`);
    expect(stdout).toMatch(/Lun:0\s+Type:MEDIA_CHANGER/);

    await expect(iscsiLs(HOST, 'host1%Wrong-Secret-123@')).rejects.toMatchObject(
      refusedWith(/Authentication failure/),
    );
    await expect(iscsiLs(HOST)).rejects.toMatchObject(refusedWith(/Authentication failure/));
    await expect(iscsiLs(STRANGER, `host1%${SECRET}@`)).rejects.toMatchObject(
      refusedWith(/Authorization failure/),
    );
  });

  it('mutual: the target answers libiscsi with its own name and secret; a wrong target secret fails', async () => {
    await change({ username: 'host1', secret: SECRET, mutual_username: 'vtl-node1', mutual_secret: MUTUAL });
    const session = await LibIscsiSession.connect(portal, TARGET, HOST, {
      chap: { username: 'host1', secret: SECRET },
      targetChap: { username: 'vtl-node1', secret: MUTUAL },
    });
    sessions.push(session);
    expect(await lunCount(session)).toBe(2);
    await expect(
      LibIscsiSession.connect(portal, TARGET, HOST, {
        chap: { username: 'host1', secret: SECRET },
        targetChap: { username: 'vtl-node1', secret: 'Not-The-Target-1' },
      }),
    ).rejects.toThrow(/CHAP_R|authenticat/i);
    // Mutual CHAP set up for a host that does not check the target: refused (a misconfiguration).
    await expect(iscsiLs(HOST, `host1%${SECRET}@`)).rejects.toMatchObject(
      refusedWith(/Authentication failure/),
    );
  });

  it('a CHAP change applies at the next login; live sessions, the host own and others, go on', async () => {
    const [plain, mutual] = sessions as [LibIscsiSession, LibIscsiSession];
    await change({ username: 'host1', secret: SECRET2 });
    await expect(iscsiLs(HOST, `host1%${SECRET}@`)).rejects.toMatchObject(
      refusedWith(/Authentication failure/),
    );
    expect((await iscsiLs(HOST, `host1%${SECRET2}@`)).stdout).toContain(`Target:${TARGET}`);
    expect(await lunCount(plain)).toBe(2);
    expect(await lunCount(mutual)).toBe(2);

    const off = await change(null);
    expect(off.body.initiators.find((i: { wwpn: string }) => i.wwpn === HOST).chap).toMatchObject({
      enabled: false,
    });
    expect((await iscsiLs(HOST)).stdout).toContain(`Target:${TARGET}`);
    expect(await lunCount(plain)).toBe(2);
  });

  it('no CHAP secret shows in a response, a log, a metric, the node status or the support bundle', async () => {
    // Secrets live again, so the pushed registry and every view are checked while they hold them.
    await change({ username: 'host1', secret: SECRET2, mutual_username: 'vtl-node1', mutual_secret: MUTUAL });
    await app.api.get('/api/targets');
    await app.api.get('/api/status');
    const bundle = await app.api.get('/api/system/support-bundle');
    expect(bundle.status).toBe(200);
    const logDir = path.join(app.stateDir, 'logs');
    const logs = await Promise.all(
      (await fs.readdir(logDir)).map((f) => fs.readFile(path.join(logDir, f), 'utf8')),
    );
    // The refusals above are logged, with their reason.
    expect(logs.join('')).toMatch(/"reason":"CHAP_R is wrong[^\n]*"msg":"login refused"/);
    // What the nodeagent reports about the emulator's registry: names and libraries only.
    const store = await app.connectStore();
    const nodeStatus = await store.list(keys.nodeStatus.prefix, z.unknown()).finally(() => store.close());
    expect(JSON.stringify(nodeStatus.items)).toContain(HOST);
    const haystacks = {
      nodeStatus: [JSON.stringify(nodeStatus.items)],
      responses: app.transcript.map((e) => e.text),
      logs,
      stdout: [app.logs],
      metrics: [(await app.plain.get('/metrics')).text],
      bundle: [gunzipSync(bundle.raw).toString('latin1')],
    };
    for (const secret of [SECRET, SECRET2, MUTUAL])
      for (const [where, texts] of Object.entries(haystacks))
        expect(
          texts.some((t) => t.includes(secret)),
          `a CHAP secret appeared in ${where}`,
        ).toBe(false);
    // At rest: sealed in every file of etcd's data directory (WAL, snapshots, bolt db).
    const secrets = [SECRET, SECRET2, MUTUAL];
    const etcdFiles = await textsInFiles(await filesUnder(path.join(app.stateDir, 'etcd')), [
      HOST,
      ...secrets,
    ]);
    expect(etcdFiles.some((f) => f.holds(HOST))).toBe(true);
    for (const secret of secrets)
      for (const f of etcdFiles) expect(f.holds(secret), `a CHAP secret in clear in ${f.file}`).toBe(false);
  });
});
