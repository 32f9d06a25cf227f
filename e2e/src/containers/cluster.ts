import { execFile } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensurePki, etcdTlsArgs, type Pki } from '@vtl/etcd-launcher';
import { ensureSealingKeyFile } from '@vtl/sealing';
import { freePorts } from '@vtl/store/testing';
import { etcdctl } from '../harness/etcdctl.js';

// testcontainers reads these when it first talks to Docker: no Ryuk (no registry to pull it
// from; the tests remove their containers themselves) and the host's own address.
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';
const { GenericContainer, Wait } = await import('testcontainers');
type Started = Awaited<ReturnType<InstanceType<typeof GenericContainer>['start']>>;

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../../..');

/**
 * Builds the vtl image (deploy/image/build.sh, cached: a rebuild sends the new dist/ only) after
 * starting Docker as this machine allows (host networking only). The workspaces are built
 * already (`npm test` builds, and every e2e file needs `npx tsc -b` first).
 */
export async function buildImage(): Promise<string> {
  await run('bash', [path.join(REPO, 'deploy/image/docker-up.sh')]);
  const { stdout } = await run('bash', [path.join(REPO, 'deploy/image/build.sh')], {
    env: { ...process.env, VTL_IMAGE: 'vtl:e2e', VTL_IMAGE_SKIP_BUILD: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return /image: (\S+) built/.exec(stdout)?.[1] ?? 'vtl:e2e';
}

export interface Member {
  name: string;
  container: Started;
}

/** Every process of the image as its own container, on the host's network, etcd over TLS. */
export class ImageCluster {
  readonly containers: Member[] = [];
  etcdEndpoints: string[] = [];
  apiPorts: { https: number; plain: number }[] = [];
  controllerHealth: number[] = [];
  /** The appliance nodes started, by name: their iSCSI and health ports. */
  readonly nodes = new Map<string, NodePorts>();
  adminPassword = 'Chart-made-password-0123';

  private constructor(
    readonly image: string,
    readonly dir: string,
    /** The test CA and each process's client certificate (etcdctl takes the controller's). */
    readonly pki: Pki,
    private readonly sealingKeyFile: string,
  ) {}

  static async create(image: string): Promise<ImageCluster> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-containers-'));
    const pki = await ensurePki(path.join(dir, 'pki'));
    const sealingKeyFile = path.join(dir, 'sealing.key');
    ensureSealingKeyFile(sealingKeyFile);
    const cluster = new ImageCluster(image, dir, pki, sealingKeyFile);
    await fs.writeFile(path.join(dir, 'admin-password'), `${cluster.adminPassword}\n`);
    // The unprivileged containers run as uid 1000: they read the PKI and write their data here.
    await run('chown', ['-R', '1000:1000', dir]);
    return cluster;
  }

  private async start(
    name: string,
    args: string[],
    env: Record<string, string>,
    opts: { root?: boolean; log?: RegExp; mounts?: { source: string; target: string }[] } = {},
  ) {
    let c = new GenericContainer(this.image)
      .withName(`vtl-e2e-${name}-${path.basename(this.dir)}`)
      .withLogConsumer((stream) => {
        const out = createWriteStream(path.join(this.dir, `${name}.log`), { flags: 'a' });
        stream.on('data', (d: Buffer | string) => out.write(d));
        stream.on('end', () => out.end());
      })
      .withNetworkMode('host')
      .withCommand(args)
      .withEnvironment(env)
      .withBindMounts([{ source: this.dir, target: this.dir }, ...(opts.mounts ?? [])])
      .withStartupTimeout(120_000)
      .withWaitStrategy(opts.log ? Wait.forLogMessage(opts.log) : Wait.forListeningPorts());
    if (opts.root) c = c.withUser('0');
    const started = await c.start().catch(async (err: Error) => {
      // The failed container's own words, for the test's failure message.
      await new Promise((r) => setTimeout(r, 500));
      const logs = await fs.readFile(path.join(this.dir, `${name}.log`), 'utf8').then(
        (t) => t.split('\n').slice(-6).join('\n'),
        () => '',
      );
      throw new Error(`${name} did not start: ${err.message}\n${logs}`);
    });
    // As Kubernetes restarts a pod's container that exits (etcd not there yet at a cold start),
    // Docker restarts it; a `docker stop` or `docker kill` of a test's fault is left alone.
    await docker('update', '--restart=unless-stopped', started.getId());
    const member = { name, container: started };
    this.containers.push(member);
    return member;
  }

  member(name: string): Member {
    const m = this.containers.find((c) => c.name === name);
    if (!m) throw new Error(`no container ${name}`);
    return m;
  }

  /**
   * Where the etcd members keep their data: memory (/dev/shm, outliving a container's restart),
   * as the store's test clusters do (@vtl/store/testing etcd-cluster.ts). On this machine's
   * loaded disk an fdatasync can take over a second, and etcd's elections then split their votes
   * for several seconds: a paused leader would measure etcd's disk, not the appliance's client.
   */
  private get etcdDataDir(): string {
    return existsSync('/dev/shm') ? path.join('/dev/shm', path.basename(this.dir)) : this.dir;
  }

  /** Three etcd members with client and peer TLS, admitting only certificates of the test CA. */
  async startEtcd(): Promise<void> {
    const source = this.etcdDataDir;
    // Mounted elsewhere than under the container's own /dev/shm (Docker's 64 MiB tmpfs there).
    const data = source === this.dir ? this.dir : '/var/lib/vtl-etcd';
    if (source !== this.dir) {
      await fs.mkdir(source, { recursive: true });
      await run('chown', ['1000:1000', source]);
    }
    const ports = await freePorts(6);
    const peers = [0, 1, 2].map((i) => `m${i}=https://127.0.0.1:${ports[i * 2 + 1]}`).join(',');
    // Clients name etcd `localhost` (in its certificate): on Node 26 @grpc/grpc-js's TLS to an
    // IP address fails ("Setting the TLS ServerName to an IP address is not permitted").
    this.etcdEndpoints = [0, 1, 2].map((i) => `https://localhost:${ports[i * 2]}`);
    const listen = [0, 1, 2].map((i) => `https://127.0.0.1:${ports[i * 2]}`);
    const tls = this.pki.files('etcd');
    await Promise.all(
      [0, 1, 2].map((i) =>
        this.start(
          `etcd${i}`,
          [
            'etcd',
            `--name=m${i}`,
            `--data-dir=${data}/etcd${i}`,
            `--listen-client-urls=${listen[i]}`,
            `--advertise-client-urls=${this.etcdEndpoints[i]}`,
            `--listen-peer-urls=https://127.0.0.1:${ports[i * 2 + 1]}`,
            `--initial-advertise-peer-urls=https://127.0.0.1:${ports[i * 2 + 1]}`,
            `--initial-cluster=${peers}`,
            '--initial-cluster-state=new',
            ...etcdTlsArgs(tls),
          ],
          {},
          {
            log: /ready to serve client requests/,
            mounts: source !== this.dir ? [{ source, target: data }] : [],
          },
        ),
      ),
    );
  }

  private storeEnv(id: 'apiserver' | 'controller' | 'nodeagent'): Record<string, string> {
    const tls = this.pki.files(id);
    return {
      VTL_ETCD_ENDPOINTS: this.etcdEndpoints.join(','),
      VTL_ETCD_CA_FILE: tls.caFile,
      VTL_ETCD_CERT_FILE: tls.certFile,
      VTL_ETCD_KEY_FILE: tls.keyFile,
      VTL_SEALING_KEY_FILE: this.sealingKeyFile,
    };
  }

  /** Two apiservers, the first admin's password from a file as the chart's Secret gives it. */
  async startApiservers(): Promise<void> {
    const ports = await freePorts(4);
    this.apiPorts = [0, 1].map((i) => ({ https: ports[i * 2]!, plain: ports[i * 2 + 1]! }));
    await Promise.all(
      this.apiPorts.map((p, i) =>
        this.start(
          `api${i}`,
          ['apiserver'],
          {
            ...this.storeEnv('apiserver'),
            VTL_BIND: '127.0.0.1',
            VTL_HTTPS_PORT: String(p.https),
            VTL_PLAIN_PORT: String(p.plain),
            VTL_STATE_DIR: `${this.dir}/api${i}`,
            VTL_INITIAL_ADMIN_PASSWORD_FILE: path.join(this.dir, 'admin-password'),
          },
          { log: /apiserver listening/ },
        ),
      ),
    );
  }

  async startControllers(): Promise<void> {
    this.controllerHealth = await freePorts(2);
    await Promise.all(
      this.controllerHealth.map((port, i) =>
        this.start(
          `ctl${i}`,
          ['controller'],
          {
            ...this.storeEnv('controller'),
            VTL_NODE: `ctl${i}`,
            VTL_HEALTH_PORT: String(port),
            VTL_HEALTH_BIND: '127.0.0.1',
          },
          { log: /serving \/healthz and \/readyz/ },
        ),
      ),
    );
  }

  /**
   * One appliance node as the chart's nodeagent pod runs it: the nodeagent and the emulator
   * (`vtl emulator`, its runner) in containers of their own on one state directory. No LIO:
   * this machine's kernel has no configfs, so the iSCSI target is the emulator's own.
   */
  async startNode(name: string, env: Record<string, string> = {}): Promise<NodePorts> {
    const [iscsiPort, healthPort] = (await freePorts(2)) as [number, number];
    const stateDir = `${this.dir}/${name}`;
    await fs.mkdir(stateDir, { recursive: true });
    await this.start(`${name}-emulator`, ['emulator'], { VTL_STATE_DIR: stateDir }, { root: true });
    await this.start(
      `${name}-agent`,
      ['nodeagent'],
      {
        ...this.storeEnv('nodeagent'),
        VTL_NODE: name,
        VTL_STATE_DIR: stateDir,
        VTL_BIND: '127.0.0.1',
        VTL_ISCSI_PORT: String(iscsiPort),
        VTL_ISCSI_OPEN: '1',
        VTL_DEFAULT_POOL: `${this.dir}/${name}-pool`,
        VTL_EMULATOR_UNIT: 'container',
        VTL_HOST_POWER: `record:${stateDir}/reboots`,
        VTL_HEALTH_PORT: String(healthPort),
        VTL_HEALTH_BIND: '127.0.0.1',
        ...env,
      },
      { root: true, log: /serving \/healthz and \/readyz/ },
    );
    this.nodes.set(name, { iscsiPort, healthPort });
    return { iscsiPort, healthPort };
  }

  /** A crash of these containers (SIGKILL): nothing is given back, leases must run out. */
  async kill(...names: string[]): Promise<void> {
    await docker('kill', '--signal', 'KILL', ...names.map((n) => this.member(n).container.getId()));
  }

  /** An orderly stop (SIGTERM, then SIGKILL after 5 s), all at once. */
  async stopMembers(...names: string[]): Promise<void> {
    await docker('stop', '--time', '5', ...names.map((n) => this.member(n).container.getId()));
  }

  /** A hung process (`docker pause`: frozen by the cgroup freezer, its connections left open). */
  async pause(name: string): Promise<void> {
    await docker('pause', this.member(name).container.getId());
  }

  /** Thaws a paused container; one that is not paused is left as it is. */
  async unpause(name: string): Promise<void> {
    const id = this.member(name).container.getId();
    if ((await docker('inspect', '--format', '{{.State.Paused}}', id)).trim() === 'true')
      await docker('unpause', id);
  }

  /** Starts stopped or killed containers again, one after the other in the order given. */
  async startAgain(...names: string[]): Promise<void> {
    for (const n of names) await docker('start', this.member(n).container.getId());
  }

  /**
   * One etcd member's own view (`etcdctl endpoint status`, answered by that member alone):
   * whether it leads and the revision it has applied; undefined while it does not answer.
   */
  async etcdMember(i: number): Promise<{ name: string; leader: boolean; revision: number } | undefined> {
    const r = await etcdctl(this.etcdEndpoints[i]!, ['endpoint', 'status', '-w', 'json'], {
      tls: this.pki.files('controller'),
    });
    // Member ids are 64-bit: compared as the digits etcdctl printed, not as JS numbers.
    const member = /"member_id":(\d+)/.exec(r.out)?.[1];
    const leader = /"leader":(\d+)/.exec(r.out)?.[1];
    const revision = /"revision":(\d+)/.exec(r.out)?.[1];
    if (r.code !== 0 || !member || !revision) return undefined;
    return { name: `etcd${i}`, leader: member === leader, revision: Number(revision) };
  }

  /** The command lines of the processes running in a container (`docker top`). */
  async processes(name: string): Promise<string[]> {
    const out = await docker('top', this.member(name).container.getId(), '-o', 'pid,args');
    return out.split('\n').slice(1).filter(Boolean);
  }

  /** The last lines a container wrote (all its runs), for a failure message. */
  async tail(name: string, lines = 8): Promise<string> {
    const id = this.member(name).container.getId();
    const { stdout, stderr } = await run('/usr/bin/docker', ['logs', '--tail', String(lines), id]);
    return `${name}:\n${stdout}${stderr}`.slice(0, 4_000);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.containers.map((m) => m.container.stop({ timeout: 5_000, remove: true }).catch(() => undefined)),
    );
    // No Ryuk: whatever a failed stop left is removed here, by name.
    const { stdout } = await run('/usr/bin/docker', [
      'ps',
      '-aq',
      '--filter',
      `name=${path.basename(this.dir)}`,
    ]);
    const ids = stdout.split('\n').filter(Boolean);
    if (ids.length > 0) await run('/usr/bin/docker', ['rm', '-f', ...ids]).catch(() => undefined);
    this.containers.length = 0;
    await fs.rm(this.dir, { recursive: true, force: true });
    await fs.rm(this.etcdDataDir, { recursive: true, force: true });
  }
}

export interface NodePorts {
  iscsiPort: number;
  healthPort: number;
}

async function docker(...args: string[]): Promise<string> {
  return (await run('/usr/bin/docker', args)).stdout;
}

/** The container's log lines, parsed where they are JSON (pino). */
export async function logLines(member: Member): Promise<any[]> {
  const stream = await member.container.logs();
  const text = await new Promise<string>((resolve) => {
    let out = '';
    stream.on('data', (d: Buffer | string) => (out += d.toString()));
    stream.on('end', () => resolve(out));
    setTimeout(() => resolve(out), 1_000);
  });
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { msg: l };
      }
    });
}
