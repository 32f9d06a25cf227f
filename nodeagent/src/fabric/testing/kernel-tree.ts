import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { QLA2XXX, type LioFabric } from '../lio-fabric.js';

/** A simulated initiator logged into the fabric through one target port. */
interface FabricLogin {
  port: string;
  initiator: string;
}

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );
/**
 * Which directory this is: inode plus birth time, since a directory removed and made again
 * between two ticks often gets the same inode back.
 */
const identityOf = async (p: string) => {
  const st = await fs.stat(p, { bigint: true }).catch(() => undefined);
  return st ? `${st.ino}:${st.birthtimeNs}` : undefined;
};
/** Not recursive: the kernel never resurrects a group userspace just removed. */
const mkdir = (p: string) => fs.mkdir(p).catch(() => undefined);
const dirs = async (p: string) =>
  (await fs.readdir(p, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

/**
 * FOR TESTS ONLY: a directory tree that behaves like the kernel's sysfs fc_host class and
 * LIO's configfs where this machine has neither (no FC HBA, no target_core_mod). It plays the
 * kernel's part after userspace acts: a new TPG or node ACL gets its default groups and
 * attributes; a fabric login becomes a session (shown in the ACL's `info`, as LIO shows it) once
 * the port's TPG is enabled and an ACL for the initiator exists; a recreated ACL or a
 * re-enabled TPG ends the session and a new one (new session id) comes up; a removed ACL or a
 * disabled TPG drops it. The product's driver runs unchanged against `configfsRoot`/`sysfsRoot`.
 */
export class KernelTree {
  readonly configfsRoot: string;
  readonly sysfsRoot: string;
  private readonly logins: FabricLogin[] = [];
  /** ACL path → identity given when the kernel first saw it (a recreated ACL gets a new one). */
  private readonly aclIdentity = new Map<string, { ino: string; id: number }>();
  /** TPG path → mtime of `enable` at the last tick (a change is a disable/enable cycle). */
  /** `${port}|${initiator}` → live session. */
  private readonly live = new Map<string, { id: number; acl: number; stamp: number }>();
  /** TPG path → identity of the directory whose default groups were made. */
  private readonly tpgSeen = new Map<string, string>();
  private nextId = 1;
  private scratchFiles = 0;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();

  private constructor(
    readonly root: string,
    /** The fabric whose configfs dialect this tree speaks (qla2xxx unless told). */
    readonly fabric: LioFabric,
  ) {
    this.configfsRoot = path.join(root, 'configfs');
    this.sysfsRoot = path.join(root, 'sysfs');
  }

  /**
   * An attribute file with its value, whole, as the kernel has it: written aside, then linked
   * in. (A plain create-then-write lets userspace read it empty, write its own value, and see
   * the stand-in's default land over it.) Never overwrites what userspace wrote.
   */
  private async createAttribute(p: string, value: string): Promise<void> {
    const aside = await this.writeAside(value);
    await fs.link(aside, p).catch(() => undefined);
    await fs.unlink(aside);
  }

  /** Replaces an existing attribute's value at once; never creates one in a group being removed. */
  private async rewriteAttribute(p: string, value: string): Promise<void> {
    if (!(await exists(p))) return;
    const aside = await this.writeAside(value);
    await fs.rename(aside, p).catch(() => fs.unlink(aside));
  }

  /** A file outside the trees, on their filesystem, so it can be linked or renamed into them. */
  private async writeAside(value: string): Promise<string> {
    const aside = path.join(this.root, `attribute-${this.scratchFiles++}`);
    await fs.writeFile(aside, value);
    return aside;
  }

  /** A fresh tree under a temp directory; no FC host port until `addHostPort`. */
  static async create(fabric: LioFabric = QLA2XXX): Promise<KernelTree> {
    const tree = new KernelTree(await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-kernel-')), fabric);
    await fs.mkdir(tree.configfsRoot, { recursive: true });
    await fs.mkdir(path.join(tree.sysfsRoot, 'class'), { recursive: true });
    return tree;
  }

  /** Environment for a nodeagent that should use this tree. */
  get env(): Record<string, string> {
    return { VTL_CONFIGFS_ROOT: this.configfsRoot, VTL_SYSFS_ROOT: this.sysfsRoot };
  }

  /** An HBA port appears, as `/sys/class/fc_host/<host>` does when qla2xxx binds. */
  async addHostPort(host: string, wwpn: string, opts: { state?: string; speed?: string } = {}) {
    const dir = path.join(this.sysfsRoot, 'class', 'fc_host', host);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'port_name'), `0x${wwpn.replace(/^naa\./, '')}\n`);
    await fs.writeFile(path.join(dir, 'port_state'), `${opts.state ?? 'Online'}\n`);
    await fs.writeFile(path.join(dir, 'speed'), `${opts.speed ?? '16 Gbit'}\n`);
  }

  /** A host logs in to the fabric through `port` (it keeps trying until an ACL lets it in). */
  login(port: string, initiator: string): Promise<void> {
    if (!this.logins.some((l) => l.port === port && l.initiator === initiator))
      this.logins.push({ port, initiator });
    return this.sync();
  }

  /** A host logs out of the fabric. */
  logout(port: string, initiator: string): Promise<void> {
    const i = this.logins.findIndex((l) => l.port === port && l.initiator === initiator);
    if (i >= 0) this.logins.splice(i, 1);
    return this.sync();
  }

  /** An ACL someone else made (e.g. with targetcli): no appliance tag. */
  async addForeignAcl(port: string, initiator: string): Promise<void> {
    await fs.mkdir(this.aclPath(port, initiator));
    await this.sync();
  }

  /** The session id of an initiator on a port ('' when it has none). */
  session(port: string, initiator: string): string {
    return String(this.live.get(`${port}|${initiator}`)?.id ?? '');
  }

  /** Reacts to userspace every `intervalMs` until `stop`. */
  start(intervalMs = 20): void {
    this.timer = setInterval(() => void this.sync(), intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.syncing;
  }

  async destroy(): Promise<void> {
    await this.stop();
    await fs.rm(this.root, { recursive: true, force: true });
  }

  tpgPath(port: string): string {
    return path.join(this.configfsRoot, this.fabric.dir, this.fabric.targetName(port), 'tpgt_1');
  }

  aclPath(port: string, initiator: string): string {
    return path.join(this.tpgPath(port), 'acls', this.fabric.aclName(initiator));
  }

  /** One kernel tick: default groups for new objects, then sessions. Serialised. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.tick()).catch(() => undefined);
    return this.syncing;
  }

  private async tick(): Promise<void> {
    for (const tpg of [...this.tpgSeen.keys()]) if (!(await exists(tpg))) this.tpgSeen.delete(tpg);
    for (const acl of [...this.aclIdentity.keys()]) if (!(await exists(acl))) this.aclIdentity.delete(acl);
    const fabric = path.join(this.configfsRoot, this.fabric.dir);
    for (const target of await dirs(fabric)) {
      await mkdir(path.join(fabric, target, 'fabric_statistics'));
      for (const tpgName of (await dirs(path.join(fabric, target))).filter((d) => d.startsWith('tpgt_'))) {
        const tpg = path.join(fabric, target, tpgName);
        await this.tpgDefaults(tpg);
        for (const acl of await dirs(path.join(tpg, 'acls')))
          await this.aclDefaults(path.join(tpg, 'acls', acl));
      }
    }
    await this.sessions();
  }

  private async tpgDefaults(tpg: string) {
    // Once per TPG directory (path and inode): while userspace removes a TPG, its default groups
    // going away must not make the kernel re-create them.
    const ino = await identityOf(tpg);
    if (ino === undefined || this.tpgSeen.get(tpg) === ino) return;
    this.tpgSeen.set(tpg, ino);
    for (const d of ['attrib', 'auth', 'param', 'lun', 'acls', 'fabric_statistics'])
      await mkdir(path.join(tpg, d));
    // tcm_loop has neither demo-mode attributes nor `enable`: its `nexus` is written by userspace.
    if (this.fabric.switchedBy === 'nexus') return;
    // tcm_qla2xxx and LIO iSCSI start a TPG in demo mode; the driver must turn it off for hard deny.
    await this.createAttribute(path.join(tpg, 'attrib', 'generate_node_acls'), '1\n');
    if (this.fabric.name === 'iscsi') {
      await mkdir(path.join(tpg, 'np'));
      await this.createAttribute(path.join(tpg, 'attrib', 'authentication'), '1\n');
    }
    await this.createAttribute(path.join(tpg, 'attrib', 'demo_mode_write_protect'), '1\n');
    await this.createAttribute(path.join(tpg, 'enable'), '0\n');
  }

  private async aclDefaults(acl: string) {
    const ino = await identityOf(acl);
    if (ino === undefined) return;
    const known = this.aclIdentity.get(acl);
    if (known && known.ino === ino) {
      // Only for a mapping in place: one being removed has lost its link first.
      for (const lun of (await dirs(acl)).filter((d) => d.startsWith('lun_'))) {
        const entries = await fs.readdir(path.join(acl, lun), { withFileTypes: true }).catch(() => []);
        if (entries.some((e) => e.isSymbolicLink()))
          await this.createAttribute(path.join(acl, lun, 'write_protect'), '0\n');
      }
      return;
    }
    // First sight of this ACL directory: a new object to the kernel, with a new identity.
    this.aclIdentity.set(acl, { ino, id: this.nextId++ });
    for (const d of ['attrib', 'auth', 'param', 'fabric_statistics']) await mkdir(path.join(acl, d));
    await this.createAttribute(path.join(acl, 'tag'), '\n');
    await this.createAttribute(path.join(acl, 'info'), 'No active session for initiator\n');
    await this.createAttribute(path.join(acl, 'cmdsn_depth'), '64\n');
  }

  private async sessions() {
    const seen = new Set<string>();
    for (const { port, initiator } of this.logins) {
      const key = `${port}|${initiator}`;
      const tpg = this.tpgPath(port);
      const acl = this.aclPath(port, initiator);
      const enable = await fs.stat(path.join(tpg, 'enable')).catch(() => undefined);
      const on = enable && (await fs.readFile(path.join(tpg, 'enable'), 'utf8')).trim() === '1';
      const identity = this.aclIdentity.get(acl)?.id;
      if (!on || identity === undefined) continue;
      const stamp = enable.mtimeMs;
      const current = this.live.get(key);
      const session =
        current && current.acl === identity && current.stamp === stamp
          ? current
          : { id: this.nextId++, acl: identity, stamp };
      this.live.set(key, session);
      seen.add(key);
      if (session !== current)
        await this.rewriteAttribute(
          path.join(acl, 'info'),
          `InitiatorName: ${this.fabric.aclName(initiator)}\nLIO Session ID: ${session.id}  SessionType: Normal\nTARG_SESS_STATE_LOGGED_IN\n`,
        );
    }
    for (const key of [...this.live.keys()]) {
      if (seen.has(key)) continue;
      this.live.delete(key);
      const [port, initiator] = key.split('|') as [string, string];
      const info = path.join(this.aclPath(port, initiator), 'info');
      await this.rewriteAttribute(info, 'No active session for initiator\n');
    }
  }
}
