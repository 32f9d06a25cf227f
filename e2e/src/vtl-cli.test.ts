import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Appliance } from './harness/appliance.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitFor } from '@vtl/reconcile';
import { startTestRgw } from '@vtl/offsite/testing/rgw';
import { vtl, vtlStream, VTL_MAIN, type CliRun } from './harness/vtl-cli.js';

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
    expect(before.code).toBe(5);
    expect(before.stderr).toMatch(/Not logged in/);
    expect(before.stderr).toMatch(/vtl login --server/);

    const wrong = await run(['login', '--server', server, '--insecure', '-u', 'admin'], 'not-the-password\n');
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(/^error: .+/);
    expect(wrong.stderr).toMatch(/vtl login/);
    await expect(fs.stat(config)).rejects.toThrow();
  });

  it('refuses the self-signed certificate unless told to trust it (--ca or --insecure)', async () => {
    const untrusted = await run(['login', '--server', server, '-u', 'admin'], `${app.adminPassword}\n`);
    expect(untrusted.code).toBe(5);
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

    // One pool as YAML is its manifest, as `vtl apply` takes it.
    const one = await run(['get', 'pool', 'default', '-o', 'yaml']);
    expect(one.code).toBe(0);
    expect(parse(one.stdout)).toEqual({
      apiVersion: 'vtl.appliance.io/v1alpha1',
      kind: 'TapePool',
      metadata: { name: 'default' },
      spec: { node: 'node1', path: pools[0].path },
    });

    const missing = await run(['get', 'pools', 'nope']);
    expect(missing.code).toBe(4);
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
    expect(invalid.code).toBe(3);
    expect(invalid.stdout).toMatch(/hosts\/broken\.yaml:6: TapeInitiator\/host-d spec\.wwpn: /);
    const refused = await run(['apply', '-f', manifests]);
    // The same invalid set exits the same way from diff and apply.
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/hosts\/broken\.yaml/);
    expect(refused.stderr).toMatch(/Nothing was changed/);
    const targets = (await app.api.get('/api/targets')).body;
    expect(targets.initiators.map((i: any) => i.wwpn)).not.toContain('naa.21000024ff8a0d01');

    const nothing = await run(['diff', '-f', path.join(dir, 'no-such-dir')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/does not exist/);
  });

  it('answers --help for every command, says option mistakes plainly, and prints versions', async () => {
    for (const command of [
      'login',
      'get',
      'describe',
      'delete',
      'activate',
      'events',
      'jobs',
      'diff',
      'apply',
      'version',
      'completion',
    ]) {
      const help = await run([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(
        new RegExp(`^Usage: vtl ${command === 'jobs' ? 'jobs' : command}`),
      );
    }
    const wrong = await run(['get', 'pools', '--colour']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error: Unknown option --colour\.\nUsage: vtl get /);
    expect(wrong.stderr).not.toMatch(/positional/);
    const noValue = await run(['get', 'pools', '-o']);
    expect(noValue.stderr).toMatch(/Option -o, --output <value> needs a value/);
    const unknown = await run(['frobnicate']);
    expect(unknown.code).toBe(2);
    const version = await run(['--version']);
    expect(version.code, version.stderr).toBe(0);
    const health = (await app.anonymous.get('/healthz')).body;
    expect(version.stdout).toBe(`vtl 0.1.0\nappliance ${health.version} at ${server}\n`);
    expect((await run(['version'])).stdout).toBe(version.stdout);
  });

  it('activates a declared library and lists, describes and follows by name', async () => {
    const declared = await app.api.post('/api/libraries', {
      name: 'cli-lib',
      product: '03584L32',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      label_prefix: 'CLI',
      pool_id: (await app.api.get('/api/pools')).body[0].id,
    });
    expect(declared.status, declared.text).toBe(201);
    const activated = await run(['activate']);
    expect(activated.code, activated.stderr).toBe(0);
    expect(activated.stdout).toMatch(/Activated the declared libraries/);
    expect((await app.api.get('/api/libraries')).body[0].state).toBe('active');

    const libraries = await run(['get', 'libraries']);
    expect(libraries.stdout.split('\n')[0]!.split(/\s{3,}/)).toContain('POOL');
    expect(libraries.stdout).toMatch(/^cli-lib\s+03584L32\s+ULT3580-TD8\s+1\s+CLI\s+active\s+default\s+/m);

    const follow = vtlStream(config, ['events', '--follow']);
    const minted = await app.api.post('/api/cartridges', { library: declared.body.library, count: 2 });
    expect(minted.status, minted.text).toBe(200);
    const [first, second] = minted.body.created.map((c: { label: string }) => c.label) as [string, string];
    await waitFor(async () => follow.stdout().includes(`cart_minted`) && follow.stdout().includes(second), {
      timeoutMs: 15_000,
    });
    await follow.stop();
    expect(follow.stdout()).not.toMatch(/pool_stats/);

    // The capacity is the image's (LTO-8's 12 TB), once the nodeagent has seen the image.
    await waitFor(async () => (await app.api.get(`/api/cartridges/${first}`)).body.capacity_bytes > 0);
    const cartridges = await run(['get', 'cartridges']);
    expect(cartridges.stdout.split('\n')[0]!.split(/\s{3,}/)).toContain('CAPACITY');
    expect(cartridges.stdout).toMatch(
      new RegExp(`^${first}\\s+cli-lib\\s+slot:\\d+\\s+resident\\s+\\S+\\s+12000\\.0G\\s`, 'm'),
    );
    const events = await run(['events', '--kind', 'cart_minted']);
    expect(events.stdout).toMatch(new RegExp(`\\sinfo\\s+cart_minted\\s+${second}`));
    // A mint is informational: asked for warnings and worse, none of them is printed.
    const urgent = await run(['events', '--severity', 'warning']);
    expect(urgent.code, urgent.stderr).toBe(0);
    expect(urgent.stdout).not.toMatch(/cart_minted/);
    const wrong = await run(['events', '--severity', 'loud']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--severity loud is not one of info, warning, error/);

    const library = await run(['describe', 'library', 'cli-lib']);
    expect(library.code, library.stderr).toBe(0);
    expect(library.stdout).toMatch(/^libraries\/cli-lib\n/);
    expect(library.stdout).toMatch(/home_pool: default \(id \d+\)/);
    expect(library.stdout).toMatch(/Phase: active/);
    expect(library.stdout).toMatch(/Ready=True/);
    const cartridge = await run(['describe', 'cartridge', first]);
    expect(cartridge.stdout).toMatch(/library: cli-lib \(id \d+\)/);
    expect(cartridge.stdout).toMatch(/Jobs: none/);
    expect(cartridge.stdout).toMatch(/cart_minted/);
  }, 180_000);

  it('watches a job to its end, and deletes by name after the name is confirmed', async () => {
    const rgw = await startTestRgw();
    try {
      const remote = await app.api.post('/api/remotes', rgw.remoteRequest('offsite', { prefix: 'cli' }));
      expect(remote.status, remote.text).toBe(201);
      const label = (await app.api.get('/api/cartridges')).body[0].label;
      const watch = vtlStream(config, ['jobs', '--watch']);
      await waitFor(async () => watch.stdout().startsWith('ID'), { timeoutMs: 10_000 });
      const job = await app.api.post(`/api/cartridges/${label}/export`, { remote_id: remote.body.id });
      expect(job.status, job.text).toBe(201);
      // The new row is printed while watching, again as it changes, until it succeeded; the remote by name.
      const done = new RegExp(`^${job.body.id}\\s+export\\s+succeeded\\s+${label}\\s+offsite\\s`, 'm');
      await waitFor(async () => done.test(watch.stdout()), { timeoutMs: 60_000 });
      await watch.stop();
      expect(watch.stdout().split('\n')[0]).toMatch(/^ID\s+KIND\s+STATE\s+LABEL\s+REMOTE\s+DONE\s+AGE$/);
    } finally {
      await rgw.stop();
    }

    // Without a terminal to type the name back, a delete needs --yes.
    const unconfirmed = await run(['delete', 'remote', 'offsite']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/needs --yes/);
    const wwpn = 'naa.21000024ff8a0b01';
    const deleted = await run(['delete', 'initiator', 'backup-host', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe('initiators/backup-host deleted\n');
    expect((await app.api.get('/api/targets')).body.initiators.map((i: any) => i.wwpn)).not.toContain(wwpn);
    const gone = await run(['describe', 'initiator', 'backup-host']);
    expect(gone.code).toBe(4);
  }, 120_000);

  it('prints manifests with get -o yaml that apply takes back unchanged', async () => {
    const out = path.join(dir, 'exported');
    await fs.mkdir(out, { recursive: true });
    for (const kind of ['pools', 'libraries', 'initiators']) {
      const yaml = await run(['get', kind, '-o', 'yaml']);
      expect(yaml.code, yaml.stderr).toBe(0);
      await fs.writeFile(path.join(out, `${kind}.yaml`), yaml.stdout);
    }
    const planned = await run(['diff', '-f', out, '--source', 'cli']);
    expect(planned.stdout).not.toMatch(/^[+~-] /m);
    expect(planned.code, planned.stdout).toBe(0);
    expect(planned.stdout).toMatch(/0 to create, 0 to update, 0 to prune, 0 refused/);
  });

  it('reports every problem of a manifest set at once, each with file:line, the field named once', async () => {
    const bad = path.join(dir, 'bad');
    await fs.mkdir(bad, { recursive: true });
    await fs.writeFile(
      path.join(bad, 'library.yaml'),
      [
        'apiVersion: vtl.appliance.io/v1alpha1',
        'kind: VirtualTapeLibrary',
        'metadata:',
        '  name: bad-lib',
        'spec:',
        '  product: 03584L32',
        '  driveProduct: ULT3580-TD8',
        '  numDrives: 40',
        '  labelPrefix: BAD',
        '  poolRef: default',
        '',
      ].join('\n'),
    );
    await fs.writeFile(
      path.join(bad, 'broken.yaml'),
      'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapePool\nmetadata:\n  name: p\n  name: q\n',
    );
    await fs.writeFile(
      path.join(bad, 'host.yaml'),
      'apiVersion: vtl.appliance.io/v1alpha1\nkind: TapeInitiator\nmetadata:\n  name: host-x\nspec:\n  wwpn: naa.21000024ff8a0e01\n  libraryRefs: [no-such-library]\n',
    );
    for (const command of ['diff', 'apply']) {
      const res = await run([command, '-f', bad]);
      expect(res.code, command).toBe(3);
      const text = res.stdout + res.stderr;
      expect(text).toMatch(/broken\.yaml:5: YAML: Map keys must be unique/);
      expect(text).toMatch(/host\.yaml:7: TapeInitiator\/host-x spec\.libraryRefs/);
      expect(text).toMatch(/library\.yaml:8: VirtualTapeLibrary\/bad-lib spec\.numDrives: (?!.*numDrives)/);
    }
  });

  it('describes and deletes pools, remotes and jobs by name, with the API refusal when it refuses', async () => {
    // The export of the test before: described by id, the remote by name; a finished job is not
    // cancelled (what delete does to a job), and stays as it was.
    const job = (await app.api.get('/api/jobs')).body.find((j: any) => j.kind === 'export');
    const describedJob = await run(['describe', 'job', String(job.id)]);
    expect(describedJob.code, describedJob.stderr).toBe(0);
    expect(describedJob.stdout).toMatch(new RegExp(`^jobs/${job.id}\\n`));
    expect(describedJob.stdout).toMatch(/remote_id: offsite \(id \d+\)/);
    expect(describedJob.stdout).toMatch(/job_update\s+export \S+: succeeded/);
    const cancel = await run(['delete', 'job', String(job.id), '--yes']);
    expect(cancel.code).toBe(4);
    expect(cancel.stderr).toMatch(/^error: .*succeeded/);
    expect((await app.api.get(`/api/jobs/${job.id}`)).body.state).toBe('succeeded');

    const describedRemote = await run(['describe', 'remote', 'offsite']);
    expect(describedRemote.code, describedRemote.stderr).toBe(0);
    expect(describedRemote.stdout).toMatch(/^remotes\/offsite\n/);
    expect(describedRemote.stdout).toMatch(/^bucket: /m);
    const deletedRemote = await run(['delete', 'remote', 'offsite', '--yes']);
    expect(deletedRemote.code, deletedRemote.stderr).toBe(0);
    expect(deletedRemote.stdout).toBe('remotes/offsite deleted\n');
    expect((await app.api.get('/api/remotes')).body).toEqual([]);
    expect((await run(['describe', 'remote', 'offsite'])).code).toBe(4);

    const created = await app.api.post('/api/pools', {
      name: 'cli-spare',
      path: path.join(app.stateDir, 'pools', 'cli-spare'),
    });
    expect(created.status, created.text).toBe(201);
    const describedPool = await run(['describe', 'pool', 'cli-spare']);
    expect(describedPool.code, describedPool.stderr).toBe(0);
    expect(describedPool.stdout).toMatch(/^pools\/cli-spare\n/);
    expect(describedPool.stdout).toMatch(/pool_created/);
    const deletedPool = await run(['delete', 'pool', 'cli-spare', '--yes']);
    expect(deletedPool.code, deletedPool.stderr).toBe(0);
    expect(deletedPool.stdout).toBe('pools/cli-spare deleted\n');
    expect((await app.api.get('/api/pools')).body.map((p: any) => p.name)).not.toContain('cli-spare');
    // The pool a library lives on is refused, and kept.
    const inUse = await run(['delete', 'pool', 'default', '--yes']);
    expect(inUse.code).toBe(4);
    expect((await app.api.get('/api/pools')).body.map((p: any) => p.name)).toContain('default');
  });

  it('prints a CHAP initiator as a manifest naming the secrets it needs, never the secrets', async () => {
    const chap = {
      username: 'host1',
      secret: 'Host1-Chap-Secret',
      mutual_username: 'vtl-node1',
      mutual_secret: 'Target-Chap-Secret',
    };
    secrets.push(chap.secret, chap.mutual_secret);
    const wwpn = 'iqn.2026-01.com.example:chap-host';
    const registered = await app.api.post('/api/targets/acls', { wwpn, alias: 'chap-host', chap });
    expect(registered.status, registered.text).toBe(200);
    const yaml = await run(['get', 'initiator', 'chap-host', '-o', 'yaml']);
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(parse(yaml.stdout)).toEqual({
      apiVersion: 'vtl.appliance.io/v1alpha1',
      kind: 'TapeInitiator',
      metadata: { name: 'chap-host' },
      spec: {
        wwpn,
        fabric: 'iscsi',
        alias: 'chap-host',
        chap: {
          username: 'host1',
          secretRef: { name: 'chap-host-chap', key: 'secret' },
          mutualUsername: 'vtl-node1',
          mutualSecretRef: { name: 'chap-host-chap', key: 'mutualSecret' },
        },
      },
    });
    const described = await run(['describe', 'initiator', 'chap-host']);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/username: host1/);
    expect(described.stdout + yaml.stdout).not.toMatch(/Chap-Secret/);
  });

  it('completes commands, kinds and names in bash', async () => {
    const script = (await run(['completion', 'bash'])).stdout;
    const complete = async (words: string[]) => {
      const { stdout } = await promisify(execFile)(
        'bash',
        [
          '-c',
          `source /dev/stdin <<'EOF'\n${script}\nEOF\nCOMP_WORDS=(${words.map((w) => `"${w}"`).join(' ')}); COMP_CWORD=${words.length - 1}; _vtl; echo "\${COMPREPLY[*]}"`,
        ],
        {
          env: {
            ...process.env,
            VTL_CONFIG: config,
            PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
          },
        },
      );
      return stdout.trim().split(/\s+/);
    };
    const shim = path.join(dir, 'vtl');
    await fs.writeFile(shim, `#!/bin/sh\nexec "${process.execPath}" "${VTL_MAIN}" "$@"\n`, { mode: 0o755 });
    expect(await complete([shim, 'de'])).toEqual(['describe', 'delete']);
    expect(await complete([shim, 'get', 'li'])).toEqual(['libraries']);
    expect(await complete([shim, 'get', 'libraries', ''])).toEqual(['cli-lib']);
    expect(await complete([shim, 'get', 'pools', '--o'])).toEqual(['--output']);
  });

  it('says to log in again when the stored session is no longer valid', async () => {
    const stored = JSON.parse(await fs.readFile(config, 'utf8'));
    const stale = path.join(dir, 'stale.json');
    await fs.writeFile(stale, JSON.stringify({ ...stored, token: 'not-a-session' }), { mode: 0o600 });
    const res = await run(['get', 'pools'], '', stale);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/^error: .+\n.*run `vtl login` again/);
  });

  it('never printed a password, token or key', async () => {
    const stored = JSON.parse(await fs.readFile(config, 'utf8'));
    secrets.push(stored.token, app.adminPassword!);
    for (const r of runs) for (const s of secrets) expect(r.stdout + r.stderr).not.toContain(s);
  });
});
