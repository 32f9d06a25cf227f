import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';

describe('apply answers what actually happened', () => {
  let app: Appliance;
  const ids: number[] = [];

  beforeAll(async () => {
    app = await Appliance.start();
    const dir = path.join(app.stateDir, 'pools', 'second');
    expect((await app.api.post('/api/pools', { name: 'second', path: dir })).status).toBeLessThan(300);
    await waitFor(
      async () =>
        (await app.api.get('/api/pools')).body.filter((p: any) => p.state === 'active').length === 2,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    for (const [i, pool] of (await app.api.get('/api/pools')).body.entries()) {
      const res = await app.api.post('/api/libraries', {
        name: `lib-${i}`,
        product: '3573-TL',
        drive_product: 'ULT3580-TD8',
        num_drives: 1,
        num_slots: 10,
        num_map: 2,
        label_prefix: `AP${i}`,
        pool_id: pool.id,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.library);
    }
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('with the nodeagent killed 0.9 s into an apply, each library is in the state the answer names', async () => {
    const applying = app.api.post('/api/libraries/apply', { confirm: 'apply' });
    await new Promise((r) => setTimeout(r, 900));
    await app.restartProcess('nodeagent/dist/main.js', 'SIGKILL');
    const res = await applying;
    const rows = (await app.api.get('/api/libraries')).body;
    if (res.status !== 200) {
      // A refusal or failure names what went wrong; it never claims a library came up.
      expect(res.body.error.message).not.toMatch(/is live: active/);
      return;
    }
    for (const id of ids) {
      const row = rows.find((r: any) => r.id === id);
      const said = res.body.steps.find((s: string) => s.startsWith(`Library ${id} `));
      expect(said, JSON.stringify(res.body.steps)).toBeDefined();
      if (/is live: active/.test(said)) {
        expect(row.state).toBe('active');
        // Served: live in the status view (once the restarted nodeagent has republished).
        await waitFor(
          async () =>
            (await app.api.get('/api/status')).body.libraries.find((l: any) => l.library.id === id).library
              .live,
          { timeoutMs: 30_000, intervalMs: 250 },
        );
      } else {
        expect(said).toMatch(/pending_restart/);
        expect(row.state).toBe('pending_restart');
      }
    }
  });
});
