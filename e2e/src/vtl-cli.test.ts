import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Appliance } from './harness/appliance.js';
import { vtl, type CliRun } from './harness/vtl-cli.js';

// The `vtl` command-line client, built (cli/dist) and run as a child process against a real
// appliance: what a user types and sees, its exit codes, and the file it keeps the credential in.

describe('vtl, the command-line client', () => {
  let app: Appliance;
  let dir: string;
  let config: string;
  let server: string;
  const runs: CliRun[] = [];
  /** Credentials no output may show (the password and session token are added at the end). */
  const secrets: string[] = [];
  const run = async (args: string[], input = '', file = config) => {
    const r = await vtl(file, args, input);
    runs.push(r);
    return r;
  };

  beforeAll(async () => {
    app = await Appliance.start();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-cli-'));
    config = path.join(dir, 'home', 'vtl', 'config.json');
    server = `https://127.0.0.1:${app.ports.https}`;
  }, 120_000);
  afterAll(async () => {
    await app?.destroy();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('says to log in first, and refuses a wrong password with the API message, storing nothing', async () => {
    const before = await run(['get', 'pools']);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/Not logged in/);
    expect(before.stderr).toMatch(/vtl login --server/);

    const wrong = await run(['login', '--server', server, '--insecure', '-u', 'admin'], 'not-the-password\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error: .+/);
    expect(wrong.stderr).toMatch(/vtl login/);
    await expect(fs.stat(config)).rejects.toThrow();
  });

  it('refuses the self-signed certificate unless told to trust it (--ca or --insecure)', async () => {
    const untrusted = await run(['login', '--server', server, '-u', 'admin'], `${app.adminPassword}\n`);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/certificate .* not trusted/);
    expect(untrusted.stderr).toMatch(/--ca FILE/);

    const ca = path.join(app.stateDir, 'tls', 'cert.pem');
    const trusted = await run(
      ['login', '--server', server, '--ca', ca, '-u', 'admin'],
      `${app.adminPassword}\n`,
    );
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toMatch(/Logged in to https:\/\/127\.0\.0\.1:\d+ as admin \(role admin\)/);
  });

  it('logs in with a password read from standard input and keeps the token in a 0600 file only', async () => {
    const res = await run(
      ['login', '--server', server, '--insecure', '--username', 'admin'],
      `${app.adminPassword}\n`,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(config);
    const stat = await fs.stat(config);
    expect(stat.mode & 0o777).toBe(0o600);
    expect((await fs.stat(path.dirname(config))).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await fs.readFile(config, 'utf8'));
    expect(stored).toMatchObject({
      server,
      credential: 'session',
      name: 'admin',
      role: 'admin',
      insecure: true,
    });
    expect(stored.token).toMatch(/.{20,}/);
    // The token is usable: the appliance knows it as admin's session.
    const who = await app.anonymous.withToken(stored.token).get('/api/auth/whoami');
    expect(who.body).toMatchObject({ kind: 'user', name: 'admin' });
  });

  it('lists pools as a table, as JSON and YAML, one by name, and says when a name is unknown', async () => {
    const table = await run(['get', 'pools']);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{3,}/)).toEqual(['NAME', 'NODE', 'PATH', 'STATE', 'LIBRARY', 'AGE']);
    expect(rows.some((r) => /^default\s+node1\s+\S+\s+active\s+<none>\s+\d+[smhd]$/.test(r))).toBe(true);

    const wide = await run(['get', 'pools', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]).toMatch(/\bID\b.*\bDETAIL\b/);

    const json = await run(['get', 'pools', '-o', 'json']);
    const pools = (await app.api.get('/api/pools')).body;
    expect(JSON.parse(json.stdout)).toEqual(pools);

    const one = await run(['get', 'pool', 'default', '-o', 'yaml']);
    expect(one.code).toBe(0);
    expect(parse(one.stdout)).toMatchObject({ name: 'default', state: 'active', node: 'node1' });

    const missing = await run(['get', 'pools', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/pools "nope" not found/);
    expect(missing.stderr).toMatch(/vtl get pools/);
  });

  it('lists every other kind: empty ones say so, initiators and remotes show what the API holds', async () => {
    for (const kind of ['libraries', 'cartridges', 'remotes', 'jobs', 'initiators']) {
      const res = await run(['get', kind]);
      expect(res.code, `${kind}: ${res.stderr}`).toBe(0);
      expect(res.stderr).toBe(`No ${kind} found.\n`);
    }
    const wwpn = 'naa.21000024ff8a0b01';
    expect((await app.api.post('/api/targets/acls', { wwpn, alias: 'backup-host' })).status).toBe(200);
    const init = await run(['get', 'initiators', '-o', 'wide']);
    expect(init.stdout.split('\n')[0]!.split(/\s{3,}/)).toEqual([
      'WWPN',
      'ALIAS',
      'FABRIC',
      'LOGGED-IN',
      'APPLIED',
      'PORTS',
      'LIBRARIES',
      'AGE',
    ]);
    expect(init.stdout).toMatch(new RegExp(`${wwpn}\\s+backup-host\\s+`));
    const byAlias = await run(['get', 'initiator', 'backup-host', '-o', 'json']);
    expect(JSON.parse(byAlias.stdout).wwpn).toBe(wwpn);
  });

  it('logs in with an API key from standard input once keys are enabled', async () => {
    expect((await app.api.put('/api/settings', { 'apikeys.enabled': '1' })).status).toBe(200);
    const created = await app.api.post('/api/apikeys', { name: 'ci', role: 'read-only' });
    expect(created.status).toBe(201);
    const keyConfig = path.join(dir, 'key', 'config.json');
    const res = await run(
      ['login', '--server', server, '--insecure', '--api-key'],
      `${created.body.key}\n`,
      keyConfig,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/as API key \S*ci \(role read-only\)/);
    const listed = await run(['get', 'pools', '-o', 'json'], '', keyConfig);
    expect(JSON.parse(listed.stdout).map((p: { name: string }) => p.name)).toContain('default');
    // The key must not show up in any output below.
    secrets.push(created.body.key);
  });

  it('diffs and applies a manifest directory: exit codes as kubectl diff, errors naming file and field', async () => {
    const manifests = path.join(dir, 'manifests');
    await fs.mkdir(path.join(manifests, 'hosts'), { recursive: true });
    const poolPath = path.join(app.stateDir, 'pools', 'cli');
    await fs.writeFile(
      path.join(manifests, 'pool.yaml'),
      `apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata:\n  name: cli-pool\nspec:\n  path: ${poolPath}\n`,
    );
    await fs.writeFile(
      path.join(manifests, 'hosts', 'initiators.yml'),
      'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapeInitiator\nmetadata:\n  name: host-c\nspec:\n  wwpn: naa.21000024ff8a0c01\n',
    );
    await fs.writeFile(path.join(manifests, 'README.md'), 'not a manifest');

    const planned = await run(['diff', '-f', manifests]);
    expect(planned.code, planned.stderr).toBe(1);
    expect(planned.stdout).toMatch(/^\+ TapePool\/cli-pool\s+create$/m);
    expect(planned.stdout).toMatch(/^\+ TapeInitiator\/host-c\s+create$/m);
    expect(planned.stdout).toMatch(/2 to create, 0 to update, 0 to prune, 0 refused/);
    expect((await app.api.get('/api/pools')).body.some((p: any) => p.name === 'cli-pool')).toBe(false);

    const applied = await run(['apply', '-f', manifests]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^tapepool\/cli-pool created$/m);
    expect(applied.stdout).toMatch(/^tapeinitiator\/host-c created$/m);
    expect((await app.api.get('/api/pools')).body.find((p: any) => p.name === 'cli-pool')).toMatchObject({
      path: poolPath,
    });

    const again = await run(['diff', '-f', manifests]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(/0 to create, 0 to update, 0 to prune, 0 refused, 2 unchanged/);

    // One broken document blocks the set; the message names the file and the field, nothing changes.
    await fs.writeFile(
      path.join(manifests, 'hosts', 'broken.yaml'),
      'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapeInitiator\nmetadata:\n  name: host-d\nspec:\n  wwpn: not-a-wwpn\n',
    );
    const invalid = await run(['diff', '-f', manifests]);
    expect(invalid.code).toBe(2);
    expect(invalid.stdout).toMatch(/hosts\/broken\.yaml \(document 1\) TapeInitiator\/host-d .*wwpn/);
    const refused = await run(['apply', '-f', manifests]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/hosts\/broken\.yaml/);
    expect(refused.stderr).toMatch(/Nothing was changed/);
    const targets = (await app.api.get('/api/targets')).body;
    expect(targets.initiators.map((i: any) => i.wwpn)).not.toContain('naa.21000024ff8a0d01');

    const nothing = await run(['diff', '-f', path.join(dir, 'no-such-dir')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/does not exist/);
  });

  it('says to log in again when the stored session is no longer valid', async () => {
    const stored = JSON.parse(await fs.readFile(config, 'utf8'));
    const stale = path.join(dir, 'stale.json');
    await fs.writeFile(stale, JSON.stringify({ ...stored, token: 'not-a-session' }), { mode: 0o600 });
    const res = await run(['get', 'pools'], '', stale);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: .+\n.*run `vtl login` again/);
  });

  it('never printed a password, token or key', async () => {
    const stored = JSON.parse(await fs.readFile(config, 'utf8'));
    secrets.push(stored.token, app.adminPassword!);
    for (const r of runs) for (const s of secrets) expect(r.stdout + r.stderr).not.toContain(s);
  });
});
