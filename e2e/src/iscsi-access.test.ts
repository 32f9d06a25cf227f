import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';

const ALLOWED = 'iqn.2026-11.test.host:allowed';
const STRANGER = 'iqn.2026-11.test.host:stranger';

describe('the iSCSI target is hard-deny', () => {
  let app: Appliance;
  let portal: string;

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_ISCSI_OPEN: '0' } });
    portal = `127.0.0.1:${app.ports.iscsi}`;
    const pool = (await app.api.get('/api/pools')).body[0];
    await app.api.post('/api/libraries', {
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 2,
      label_prefix: 'ACL',
      pool_id: pool.id,
    });
    await app.apply();
    // The initiator registry is the allow-list (e2e/src/iscsi-registry.test.ts covers it in depth).
    expect((await app.api.post('/api/targets/acls', { wwpn: ALLOWED, fabric: 'iscsi' })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('refuses an initiator that is not allowed and lets an allowed one in', async () => {
    const target = 'iqn.2026-11.io.vtl:node1';
    await expect(LibIscsiSession.connect(portal, target, STRANGER)).rejects.toThrow(/login|fail|author/i);
    const session = await LibIscsiSession.connect(portal, target, ALLOWED);
    const luns = await session.command(0, [0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], { dataInLength: 256 });
    // REPORT LUNS is exempt from unit attention: a changer and two drives, 8 bytes each.
    expect(luns.status).toBe(0);
    expect(luns.data.readUInt32BE(0)).toBe(3 * 8);
    await session.close();
  });
});
