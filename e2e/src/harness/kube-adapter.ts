import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeStandIn } from '@vtl/gitops/testing/kube-standin';
import type { Appliance } from './appliance.js';

const root = path.resolve(import.meta.dirname, '../../..');

/** A custom resource as the tests read it back. */
export interface Cr {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    generation: number;
    uid?: string;
    resourceVersion: string;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: Record<string, unknown>;
  // Status is read field by field in assertions.

  status?: any;
}

/**
 * The Kubernetes adapter's process (gitops/dist/kube/main.js) against the TEST-ONLY kube-apiserver
 * stand-in and a real appliance, and a small client of the stand-in for the test's own kubectl.
 */
export class KubeAdapterRun {
  private child: ChildProcess | undefined;
  output = '';

  constructor(
    readonly kube: KubeStandIn,
    readonly namespace: string,
    private readonly dir: string,
  ) {}

  static async start(app: Appliance, dir: string, namespace = 'backup'): Promise<KubeAdapterRun> {
    const kube = new KubeStandIn(undefined, 300);
    const url = await kube.start();
    const run = new KubeAdapterRun(kube, namespace, dir);
    const kubeconfig = path.join(dir, 'kubeconfig.json');
    await fs.writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // The stand-in speaks plain HTTP, which client-node allows only with TLS verification off.
        clusters: [{ name: 'standin', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'adapter', user: { token: kube.token } }],
        contexts: [{ name: 'standin', context: { cluster: 'standin', user: 'adapter', namespace } }],
        'current-context': 'standin',
      }),
      { mode: 0o600 },
    );
    const passwordFile = path.join(dir, 'admin-password');
    await fs.writeFile(passwordFile, app.adminPassword!, { mode: 0o600 });
    run.child = spawn(process.execPath, [path.join(root, 'gitops/dist/kube/main.js')], {
      cwd: root,
      env: {
        ...process.env,
        VTL_KUBECONFIG: kubeconfig,
        VTL_KUBE_NAMESPACE: namespace,
        VTL_API_URL: `https://127.0.0.1:${app.ports.https}`,
        VTL_API_CA_FILE: path.join(app.stateDir, 'tls', 'cert.pem'),
        VTL_API_USERNAME: 'admin',
        VTL_API_PASSWORD_FILE: passwordFile,
        VTL_KUBE_DEBOUNCE_MS: '200',
        VTL_KUBE_RESYNC_SEC: '2',
        VTL_LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => (run.output = (run.output + d.toString()).slice(-100_000));
    run.child.stdout?.on('data', keep);
    run.child.stderr?.on('data', keep);
    return run;
  }

  private path(plural: string, name?: string, sub?: string) {
    const base = `/apis/vtl.appliance.io/v1alpha1/namespaces/${this.namespace}/${plural}`;
    return [base, name, sub].filter(Boolean).join('/');
  }

  /** One request to the stand-in, as kubectl would send it. */
  async call(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.kube.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${this.kube.token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  }

  async create(kind: string, plural: string, name: string, spec: Record<string, unknown>): Promise<Cr> {
    const res = await this.call('POST', this.path(plural), {
      apiVersion: 'vtl.appliance.io/v1alpha1',
      kind,
      metadata: { name },
      spec,
    });
    if (res.status !== 201) throw new Error(`create ${kind}/${name}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async get(plural: string, name: string): Promise<Cr | undefined> {
    const res = await this.call('GET', this.path(plural, name));
    return res.status === 200 ? res.body : undefined;
  }

  /** Read, change the spec, write back (retrying a conflict with the adapter's writes). */
  async editSpec(plural: string, name: string, change: (spec: Record<string, unknown>) => void): Promise<Cr> {
    for (;;) {
      const cr = (await this.get(plural, name))!;
      change(cr.spec);
      const res = await this.call('PUT', this.path(plural, name), cr);
      if (res.status === 200) return res.body;
      if (res.status !== 409) throw new Error(`update ${plural}/${name}: ${JSON.stringify(res.body)}`);
    }
  }

  async delete(plural: string, name: string): Promise<void> {
    const res = await this.call('DELETE', this.path(plural, name));
    if (res.status !== 200) throw new Error(`delete ${plural}/${name}: ${JSON.stringify(res.body)}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
    await this.kube.stop();
  }
}

/** A condition of a custom resource's status, by type. */
export const condition = (cr: Cr | undefined, type: string) =>
  (
    cr?.status?.conditions as { type: string; status: string; reason: string; message: string }[] | undefined
  )?.find((c) => c.type === type);
