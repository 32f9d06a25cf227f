import koffi from 'koffi';

/**
 * A real iSCSI initiator for tests: Debian's libiscsi.so.7 (1.19) through koffi. Every blocking
 * libiscsi call runs on koffi's worker threads (`.async`), so a target in the same process keeps
 * serving while a test waits; calls on one session are serialised because a libiscsi context is
 * not thread-safe.
 */

/** libiscsi 1.19 `struct scsi_task` (176 bytes), offsets checked against scsi-lowlevel.h. */
const TASK = { status: 0, residualStatus: 32, residual: 40, dataInSize: 64, dataInData: 72 } as const;
const SESSION_DISCOVERY = 1;
const SESSION_NORMAL = 2;
const HEADER_DIGEST_NONE = 0;
const HEADER_DIGEST_CRC32C = 3;
const XFER_NONE = 0;
const XFER_READ = 1;
const XFER_WRITE = 2;
const STATUS_CHECK_CONDITION = 2;

/** Task management functions (enum iscsi_task_mgmt_funcs). */
export const TaskManagement = {
  ABORT_TASK: 1,
  ABORT_TASK_SET: 2,
  CLEAR_TASK_SET: 4,
  LUN_RESET: 5,
  TARGET_WARM_RESET: 6,
} as const;

type Ptr = bigint;
type AsyncFn = { async: (...args: unknown[]) => void };

interface Lib {
  createContext: AsyncFn & ((name: string) => Ptr | null);
  destroyContext: AsyncFn;
  setTargetName: (ctx: Ptr, name: string) => number;
  setSessionType: (ctx: Ptr, type: number) => number;
  setHeaderDigest: (ctx: Ptr, digest: number) => number;
  setIsidRandom: (ctx: Ptr, rnd: number, qualifier: number) => number;
  setNoAutoReconnect: (ctx: Ptr, state: number) => number;
  setTimeout: (ctx: Ptr, seconds: number) => number;
  setInitiatorChap: (ctx: Ptr, user: string, password: string) => number;
  setTargetChap: (ctx: Ptr, user: string, password: string) => number;
  getError: (ctx: Ptr) => string;
  fullConnect: AsyncFn;
  connect: AsyncFn;
  login: AsyncFn;
  logout: AsyncFn;
  disconnect: AsyncFn;
  discovery: AsyncFn;
  freeDiscovery: (ctx: Ptr, data: Ptr) => void;
  createTask: (cdbSize: number, cdb: Buffer, dir: number, length: number) => Ptr | null;
  freeTask: (task: Ptr) => void;
  addDataInBuffer: (task: Ptr, length: number, buf: Buffer) => number;
  command: AsyncFn;
  taskMgmt: AsyncFn;
}

let lib: Lib | undefined;

function load(): Lib {
  if (lib) return lib;
  const so = koffi.load('libiscsi.so.7');
  const f = (decl: string) => so.func(decl) as unknown;
  lib = {
    createContext: f('void *iscsi_create_context(const char *initiator_name)') as Lib['createContext'],
    destroyContext: f('int iscsi_destroy_context(void *iscsi)') as AsyncFn,
    setTargetName: f('int iscsi_set_targetname(void *iscsi, const char *name)') as Lib['setTargetName'],
    setSessionType: f('int iscsi_set_session_type(void *iscsi, int type)') as Lib['setSessionType'],
    setHeaderDigest: f('int iscsi_set_header_digest(void *iscsi, int digest)') as Lib['setHeaderDigest'],
    setIsidRandom: f(
      'int iscsi_set_isid_random(void *iscsi, uint32_t rnd, uint32_t qualifier)',
    ) as Lib['setIsidRandom'],
    setNoAutoReconnect: f(
      'void iscsi_set_noautoreconnect(void *iscsi, int state)',
    ) as Lib['setNoAutoReconnect'],
    setTimeout: f('int iscsi_set_timeout(void *iscsi, int seconds)') as Lib['setTimeout'],
    setInitiatorChap: f(
      'int iscsi_set_initiator_username_pwd(void *iscsi, const char *user, const char *passwd)',
    ) as Lib['setInitiatorChap'],
    setTargetChap: f(
      'int iscsi_set_target_username_pwd(void *iscsi, const char *user, const char *passwd)',
    ) as Lib['setTargetChap'],
    getError: f('const char *iscsi_get_error(void *iscsi)') as Lib['getError'],
    fullConnect: f('int iscsi_full_connect_sync(void *iscsi, const char *portal, int lun)') as AsyncFn,
    connect: f('int iscsi_connect_sync(void *iscsi, const char *portal)') as AsyncFn,
    login: f('int iscsi_login_sync(void *iscsi)') as AsyncFn,
    logout: f('int iscsi_logout_sync(void *iscsi)') as AsyncFn,
    disconnect: f('int iscsi_disconnect(void *iscsi)') as AsyncFn,
    discovery: f('void *iscsi_discovery_sync(void *iscsi)') as AsyncFn,
    freeDiscovery: f('void iscsi_free_discovery_data(void *iscsi, void *data)') as Lib['freeDiscovery'],
    createTask: f(
      'void *scsi_create_task(int cdb_size, uint8_t *cdb, int xfer_dir, int expxferlen)',
    ) as Lib['createTask'],
    freeTask: f('void scsi_free_scsi_task(void *task)') as Lib['freeTask'],
    addDataInBuffer: f(
      'int scsi_task_add_data_in_buffer(void *task, int len, uint8_t *buf)',
    ) as Lib['addDataInBuffer'],
    command: f('void *iscsi_scsi_command_sync(void *iscsi, int lun, void *task, void *data)') as AsyncFn,
    taskMgmt: f(
      'int iscsi_task_mgmt_sync(void *iscsi, int lun, int fn, uint32_t ritt, uint32_t rcmdsn)',
    ) as AsyncFn,
  };
  return lib;
}

function call<T>(fn: AsyncFn, ...args: unknown[]): Promise<T> {
  return new Promise((resolve, reject) => {
    fn.async(...args, (err: unknown, result: T) => (err ? reject(err) : resolve(result)));
  });
}

export interface ConnectOptions {
  /** Ask for CRC32C header digests (libiscsi does not implement data digests). */
  headerDigest?: boolean;
  /** libiscsi's per-command timeout in seconds (default 10). */
  timeoutSeconds?: number;
  /** Log in with CHAP as this user (libiscsi then offers AuthMethod=CHAP,None). */
  chap?: { username: string; secret: string };
  /** Mutual CHAP: the name and secret the target must answer libiscsi's challenge with. */
  targetChap?: { username: string; secret: string };
}

export interface CommandOptions {
  dataOut?: Buffer;
  dataInLength?: number;
}

export interface CommandResult {
  status: number;
  /** Fixed or descriptor sense data with CHECK CONDITION, empty otherwise. */
  sense: Buffer;
  /** The data-in that arrived, also ahead of a CHECK CONDITION (a short read's block). */
  data: Buffer;
  residual: { kind: 'none' | 'underflow' | 'overflow'; count: number };
}

export interface DiscoveredTarget {
  targetName: string;
  portals: string[];
}

let isidCounter = Math.floor(Math.random() * 0x10000);

/** Builds a fresh context; distinct ISIDs keep concurrent sessions of one initiator apart. */
function context(initiatorIqn: string, opts: ConnectOptions): Ptr {
  const l = load();
  const ctx = l.createContext(initiatorIqn);
  if (!ctx) throw new Error('iscsi_create_context failed');
  l.setIsidRandom(ctx, isidCounter++ & 0xffffff, 0);
  // A refused login must fail the call, not loop on reconnects.
  l.setNoAutoReconnect(ctx, 1);
  l.setTimeout(ctx, opts.timeoutSeconds ?? 10);
  l.setHeaderDigest(ctx, opts.headerDigest ? HEADER_DIGEST_CRC32C : HEADER_DIGEST_NONE);
  if (opts.chap) l.setInitiatorChap(ctx, opts.chap.username, opts.chap.secret);
  if (opts.targetChap) l.setTargetChap(ctx, opts.targetChap.username, opts.targetChap.secret);
  return ctx;
}

/** One libiscsi session: a normal session logged in to one target. */
export class LibIscsiSession {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly ctx: Ptr) {}

  /** Connects and logs in to `targetIqn` at `portal` (host:port). Throws with libiscsi's error. */
  static async connect(
    portal: string,
    targetIqn: string,
    initiatorIqn: string,
    opts: ConnectOptions = {},
  ): Promise<LibIscsiSession> {
    const l = load();
    const ctx = context(initiatorIqn, opts);
    l.setTargetName(ctx, targetIqn);
    l.setSessionType(ctx, SESSION_NORMAL);
    // lun -1: no TEST UNIT READY after login, so tests see unit attentions themselves.
    const rc = await call<number>(l.fullConnect, ctx, portal, -1);
    if (rc !== 0) {
      const error = l.getError(ctx);
      await call(l.destroyContext, ctx);
      throw new Error(`iSCSI login to ${targetIqn} at ${portal} failed: ${error}`);
    }
    return new LibIscsiSession(ctx);
  }

  /** A discovery session: SendTargets=All, then logout. */
  static async discover(
    portal: string,
    initiatorIqn: string,
    opts: ConnectOptions = {},
  ): Promise<DiscoveredTarget[]> {
    const l = load();
    const ctx = context(initiatorIqn, opts);
    try {
      l.setSessionType(ctx, SESSION_DISCOVERY);
      if ((await call<number>(l.connect, ctx, portal)) !== 0 || (await call<number>(l.login, ctx)) !== 0) {
        throw new Error(`iSCSI discovery at ${portal} failed: ${l.getError(ctx)}`);
      }
      const list = await call<Ptr | null>(l.discovery, ctx);
      if (!list) throw new Error(`SendTargets failed: ${l.getError(ctx)}`);
      const targets: DiscoveredTarget[] = [];
      for (let addr: Ptr | null = list; addr; addr = koffi.decode(addr, 0, 'void *') as Ptr | null) {
        const portals: string[] = [];
        let p = koffi.decode(addr, 16, 'void *') as Ptr | null;
        for (; p; p = koffi.decode(p, 0, 'void *') as Ptr | null)
          portals.push(koffi.decode(p, 8, 'const char *') as string);
        targets.push({ targetName: koffi.decode(addr, 8, 'const char *') as string, portals });
      }
      l.freeDiscovery(ctx, list);
      await call(l.logout, ctx);
      return targets;
    } finally {
      await call(l.destroyContext, ctx);
    }
  }

  /** Sends one CDB and waits for its status. Transport failures throw; SCSI errors are results. */
  command(lun: number, cdb: Buffer | readonly number[], opts: CommandOptions = {}): Promise<CommandResult> {
    return this.serial(() => this.run(lun, Buffer.from(cdb), opts));
  }

  /** Issues a task management function; resolves with libiscsi's error text, or undefined on success. */
  taskManagement(
    lun: number,
    fn: number,
    referencedTaskTag = 0xffffffff,
    refCmdSn = 0,
  ): Promise<string | undefined> {
    return this.serial(async () => {
      const l = load();
      const rc = await call<number>(l.taskMgmt, this.ctx, lun, fn, referencedTaskTag, refCmdSn);
      return rc === 0 ? undefined : l.getError(this.ctx);
    });
  }

  /** Logs out and frees the context. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.serial(async () => {
      const l = load();
      await call(l.logout, this.ctx);
      await call(l.disconnect, this.ctx);
      await call(l.destroyContext, this.ctx);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async run(lun: number, cdb: Buffer, opts: CommandOptions): Promise<CommandResult> {
    if (this.closed) throw new Error('session closed');
    const l = load();
    const dataOut = opts.dataOut;
    const dir = dataOut ? XFER_WRITE : opts.dataInLength ? XFER_READ : XFER_NONE;
    const length = dataOut ? dataOut.length : (opts.dataInLength ?? 0);
    const task = l.createTask(cdb.length, cdb, dir, length);
    if (!task) throw new Error('scsi_create_task failed');
    // Data-in lands here, and stays apart from the sense libiscsi keeps in the task's datain.
    const dataIn = dir === XFER_READ ? Buffer.alloc(length) : undefined;
    if (dataIn && l.addDataInBuffer(task, length, dataIn) !== 0) {
      l.freeTask(task);
      throw new Error('scsi_task_add_data_in_buffer failed');
    }
    try {
      // struct iscsi_data { size_t size; unsigned char *data; }, pointing into dataOut (kept alive below).
      const iscsiData = dataOut ? Buffer.alloc(16) : null;
      if (dataOut && iscsiData) {
        iscsiData.writeBigUInt64LE(BigInt(dataOut.length), 0);
        iscsiData.writeBigUInt64LE(koffi.address(dataOut), 8);
      }
      const done = await call<Ptr | null>(l.command, this.ctx, lun, task, iscsiData);
      void dataOut;
      if (!done) throw new Error(`SCSI command failed: ${l.getError(this.ctx)}`);
      const status = koffi.decode(task, TASK.status, 'int') as number;
      const residualStatus = koffi.decode(task, TASK.residualStatus, 'int') as number;
      const residual = Number(koffi.decode(task, TASK.residual, 'size_t'));
      const kind = residualStatus === 1 ? 'underflow' : residualStatus === 2 ? 'overflow' : 'none';
      const data = dataIn
        ? dataIn.subarray(0, length - (kind === 'underflow' ? residual : 0))
        : Buffer.alloc(0);
      let sense = Buffer.alloc(0);
      if (status === STATUS_CHECK_CONDITION) {
        // libiscsi keeps the response's sense segment (2-byte length + sense) in datain.
        const size = koffi.decode(task, TASK.dataInSize, 'int') as number;
        const ptr = koffi.decode(task, TASK.dataInData, 'void *') as Ptr | null;
        // Copied out: koffi.view aliases libiscsi's buffer, which scsi_free_scsi_task releases.
        const raw = size > 0 && ptr ? Buffer.from(new Uint8Array(koffi.view(ptr, size))) : Buffer.alloc(0);
        sense = raw.subarray(2, 2 + (raw.length >= 2 ? raw.readUInt16BE(0) : 0));
      }
      return { status, sense, data, residual: { kind, count: residual } };
    } finally {
      l.freeTask(task);
    }
  }
}
