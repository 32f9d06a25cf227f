import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Store, type StoreTls } from '@vtl/store';
import { freePort } from '@vtl/store/testing';
import { waitFor } from '@vtl/reconcile';
import { ApiClient, type ApiResponse, type Exchange } from './api-client.js';

const root = path.resolve(import.meta.dirname, '../../..');

export interface ApplianceOptions {
  /** Reuse a state directory (restart tests); a fresh temp dir otherwise. */
  stateDir?: string;
  env?: Record<string, string>;
  /** What starts it; default `node appliance/dist/main.js` (e.g. `bash scripts/start.sh`). */
  command?: string[];
}

/**
 * The real single-node appliance (`appliance/dist/main.js`): its own etcd, apiserver,
 * controller, nodeagent and emulator, on free ports of 127.0.0.1.
 */
export class Appliance {
  private child: ChildProcess | undefined;
  private output = '';
  /** The launcher's stdout alone, whole, since the last boot (its log stream). */
  stdout = '';
  /** Logged in as admin (session token from POST /api/auth/login). */
  api!: ApiClient;
  /** No credentials: for the 401 tests. */
  anonymous!: ApiClient;
  plain!: ApiClient;
  /** Every request the clients made and what came back, for the secret-leak check. */
  readonly transcript: Exchange[] = [];
  /** The admin password: the initial one from the state dir unless a test changed it. */
  adminPassword: string | undefined;
  ports!: { https: number; plain: number; iscsi: number; etcdClient: number; etcdPeer: number };
  /** Reboot requests the nodeagent made (its host-power interface records instead of rebooting). */
  readonly rebootLog: string;

  /** What boot() runs, in the project root (settable between boots). */
  command = [process.execPath, path.join(root, 'appliance/dist/main.js')];

  private constructor(
    readonly stateDir: string,
    private readonly env: Record<string, string>,
  ) {
    this.rebootLog = path.join(stateDir, 'reboots.jsonl');
  }

  static async start(opts: ApplianceOptions = {}): Promise<Appliance> {
    const stateDir = opts.stateDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-')));
    const app = new Appliance(stateDir, opts.env ?? {});
    if (opts.command) app.command = opts.command;
    await app.boot();
    return app;
  }

  /** Starts the appliance on new free ports and waits until the data plane is up. */
  async boot(): Promise<void> {
    this.ports ??= {
      https: await freePort(),
      plain: await freePort(),
      iscsi: await freePort(),
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
    };
    this.output = '';
    this.stdout = '';
    const [command, ...args] = this.command;
    const child = spawn(command!, args, {
      cwd: root,
      env: this.launchEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => {
      this.output = (this.output + d.toString()).slice(-200_000);
      this.stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-200_000)));
    this.anonymous = new ApiClient(`https://127.0.0.1:${this.ports.https}`, '', this.transcript);
    this.plain = new ApiClient(`http://127.0.0.1:${this.ports.plain}`, '', this.transcript);
    const alive = async () => {
      if (child.exitCode !== null) throw new Error(`appliance exited with ${child.exitCode}`);
    };
    try {
      await waitFor(async () => (await alive(), await this.login()), { timeoutMs: 60_000, intervalMs: 200 });
      await waitFor(async () => (await alive(), await this.ready()), { timeoutMs: 60_000, intervalMs: 200 });
      // What answers must be this start, not another appliance still holding the state dir.
      await waitFor(async () => (await alive(), await this.holdsStateDir()), {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
    } catch (err) {
      throw new Error(`appliance did not come up: ${(err as Error).message}\n${this.output.slice(-5000)}`);
    }
  }

  /** The environment boot() starts the appliance with (its ports, state dir and test settings). */
  launchEnv(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      VTL_STATE_DIR: this.stateDir,
      VTL_NODE: 'node1',
      VTL_HTTPS_PORT: String(this.ports.https),
      VTL_PLAIN_PORT: String(this.ports.plain),
      VTL_ISCSI_PORT: String(this.ports.iscsi),
      VTL_ETCD_CLIENT_PORT: String(this.ports.etcdClient),
      VTL_ETCD_PEER_PORT: String(this.ports.etcdPeer),
      VTL_HOST_POWER: `record:${this.rebootLog}`,
      VTL_ISCSI_OPEN: '1',
      ...this.env,
    };
  }

  /** The pid of the launcher (the appliance's main process), while it runs. */
  get pid(): number | undefined {
    const child = this.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Sends a signal to the launcher and resolves once it has exited (kill -9: a crash, an OOM). */
  async signalMain(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.api?.close();
    this.anonymous?.close();
    this.plain?.close();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  /** True when the state dir's lock is held by the started process or its child (npm start). */
  private async holdsStateDir(): Promise<boolean> {
    const lock = await fs
      .readFile(path.join(this.stateDir, 'run', 'appliance.lock'), 'utf8')
      .then((t) => JSON.parse(t) as { pid: number })
      .catch(() => undefined);
    if (!lock || !this.child?.pid) return false;
    if (lock.pid === this.child.pid) return true;
    const stat = await fs.readFile(`/proc/${lock.pid}/stat`, 'utf8').catch(() => '');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === this.child.pid;
  }

  /** Logs in as admin once the apiserver answers and has written the initial password. */
  private async login(): Promise<boolean> {
    this.adminPassword ??= await fs
      .readFile(path.join(this.stateDir, 'initial-admin-password'), 'utf8')
      .then((s) => s.trim())
      .catch(() => undefined);
    if (!this.adminPassword) return false;
    const res = await this.anonymous
      .post('/api/auth/login', { username: 'admin', password: this.adminPassword })
      .catch(() => undefined);
    if (res?.status !== 200) return false;
    this.api?.close();
    this.api = this.anonymous.withToken(res.body.token);
    return true;
  }

  /**
   * After the admin's password changed (in the console, say, which ends the other sessions of
   * admin, this harness's too): logs in again with the new one.
   */
  async adminPasswordChanged(password: string): Promise<void> {
    this.adminPassword = password;
    if (!(await this.login())) throw new Error('admin login with the changed password failed');
  }

  /** A client logged in as another user. */
  async loginAs(username: string, password: string): Promise<ApiClient> {
    const res = await this.anonymous.post('/api/auth/login', { username, password });
    if (res.status !== 200) throw new Error(`login as ${username} failed: ${res.text}`);
    return this.anonymous.withToken(res.body.token);
  }

  /**
   * POST /api/libraries/apply as admin, which a test's set-up needs to succeed: any other answer
   * fails with the answer's body (the steps the controller recorded) and the appliance's last
   * output, so a failure on a loaded CI machine says which process did not come back and why.
   */
  async apply(): Promise<ApiResponse> {
    const res = await this.api.post('/api/libraries/apply', { confirm: 'apply' });
    if (res.status !== 200)
      throw new Error(
        `apply answered ${res.status}: ${res.text}\n--- appliance output ---\n${this.output.slice(-8000)}`,
      );
    return res;
  }

  /** Up: a pool is active and every active library is live again (served by the emulator). */
  private async ready(): Promise<boolean> {
    const pools = await this.api.get('/api/pools').catch(() => undefined);
    if (pools?.status !== 200 || !pools.body.some((p: { state: string }) => p.state === 'active'))
      return false;
    const [libraries, status] = await Promise.all([
      this.api.get('/api/libraries'),
      this.api.get('/api/status'),
    ]);
    // The emulator serves its iSCSI target even with no library: up is when the node reports it
    // and the port answers. The report alone can be the last start's: a node record whose lease
    // outlived its appliance (its etcd stopped first, and a restarted etcd renews every lease).
    if (status.body.fabrics?.iscsi?.present !== true) return false;
    if (!(await acceptsConnections(this.ports.iscsi))) return false;
    const live = new Set(
      status.body.libraries.filter((l: any) => l.library.live).map((l: any) => l.library.id),
    );
    return libraries.body.every((l: { id: number; state: string }) => l.state !== 'active' || live.has(l.id));
  }

  /**
   * Stops one process of the appliance (by its entry, e.g. `apiserver/dist/server.js`) with
   * SIGTERM; the launcher restarts it about a second later. Returns the stopped pid.
   */
  async restartProcess(entry: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<number> {
    const pid = await this.childPid(entry);
    if (pid === undefined) throw new Error(`no child process of the appliance runs ${entry}`);
    process.kill(pid, signal);
    return pid;
  }

  /** The pid of the launcher's child running `entry` (e.g. `controller/dist/main.js`), if any. */
  async childPid(entry: string): Promise<number | undefined> {
    const parent = this.child?.pid;
    if (!parent) throw new Error('the appliance is not running');
    for (const pid of await fs.readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.includes(entry)) return Number(pid);
    }
    return undefined;
  }

  /** The emulator of this appliance (the nodeagent's detached child, no child of the launcher), by its command line. */
  async emulatorPid(): Promise<number | undefined> {
    for (const pid of await fs.readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.includes('emulator/dist/main.js') && cmdline.includes(this.stateDir)) return Number(pid);
    }
    return undefined;
  }

  /** The admin client certificate of the appliance's PKI: its etcd admits no client without one. */
  get storeTls(): StoreTls {
    const pki = path.join(this.stateDir, 'pki');
    return {
      caFile: path.join(pki, 'ca.crt'),
      certFile: path.join(pki, 'admin.crt'),
      keyFile: path.join(pki, 'admin.key'),
    };
  }

  /** The appliance's etcd client URL (TLS with client certificates). */
  get etcdEndpoint(): string {
    return `https://127.0.0.1:${this.ports.etcdClient}`;
  }

  /**
   * A Store on the appliance's own etcd, as the admin certificate, sealing and opening secrets
   * with the appliance's key (or opts.sealingKeyFile). The caller closes it.
   */
  connectStore(opts: { sealingKeyFile?: string } = {}): Promise<Store> {
    return Store.connect({
      endpoints: [this.etcdEndpoint],
      tls: this.storeTls,
      sealingKeyFile: opts.sealingKeyFile ?? path.join(this.stateDir, 'pki', 'sealing.key'),
    });
  }

  /** The last lines the appliance printed, for failure messages. */
  get logs(): string {
    return this.output.slice(-8000);
  }

  /** SIGTERM and wait: the clean stop of `npm start` + Ctrl-C. */
  async stop(): Promise<void> {
    await this.signalMain('SIGTERM');
  }

  /** Stops and deletes the state directory. */
  async destroy(): Promise<void> {
    await this.stop();
    await fs.rm(this.stateDir, { recursive: true, force: true });
  }
}

/** Whether something listens on a port of 127.0.0.1. */
function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
