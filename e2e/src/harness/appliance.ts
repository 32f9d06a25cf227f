import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@vtl/store';
import { waitFor } from '@vtl/reconcile';
import { ApiClient } from './api-client.js';

const root = path.resolve(import.meta.dirname, '../../..');

export interface ApplianceOptions {
  /** Reuse a state directory (restart tests); a fresh temp dir otherwise. */
  stateDir?: string;
  env?: Record<string, string>;
}

/**
 * The real single-node appliance (`appliance/dist/main.js`): its own etcd, apiserver,
 * controller, nodeagent and emulator, on free ports of 127.0.0.1.
 */
export class Appliance {
  private child: ChildProcess | undefined;
  private output = '';
  api!: ApiClient;
  plain!: ApiClient;
  ports!: { https: number; plain: number; iscsi: number; etcdClient: number; etcdPeer: number };
  /** Reboot requests the nodeagent made (its host-power interface records instead of rebooting). */
  readonly rebootLog: string;

  private constructor(
    readonly stateDir: string,
    private readonly env: Record<string, string>,
  ) {
    this.rebootLog = path.join(stateDir, 'reboots.jsonl');
  }

  static async start(opts: ApplianceOptions = {}): Promise<Appliance> {
    const stateDir = opts.stateDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-')));
    const app = new Appliance(stateDir, opts.env ?? {});
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
    const child = spawn(process.execPath, [path.join(root, 'appliance/dist/main.js')], {
      env: {
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
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-200_000)));
    child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-200_000)));
    this.api = new ApiClient(`https://127.0.0.1:${this.ports.https}`);
    this.plain = new ApiClient(`http://127.0.0.1:${this.ports.plain}`);
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`appliance exited with ${child.exitCode}`);
          return await this.ready();
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    } catch (err) {
      throw new Error(`appliance did not come up: ${(err as Error).message}\n${this.output.slice(-5000)}`);
    }
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
    const live = new Set(
      status.body.libraries.filter((l: any) => l.library.live).map((l: any) => l.library.id),
    );
    return libraries.body.every((l: { id: number; state: string }) => l.state !== 'active' || live.has(l.id));
  }

  /** The last lines the appliance printed, for failure messages. */
  get logs(): string {
    return this.output.slice(-8000);
  }

  /** SIGTERM and wait: the clean stop of `npm start` + Ctrl-C. */
  async stop(): Promise<void> {
    const child = this.child;
    this.api?.close();
    this.plain?.close();
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }

  /** Stops and deletes the state directory. */
  async destroy(): Promise<void> {
    await this.stop();
    await fs.rm(this.stateDir, { recursive: true, force: true });
  }
}
