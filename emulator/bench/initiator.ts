import { closeSync, openSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import koffi from 'koffi';
import { machineBusySeconds } from './processes.js';

/**
 * The benchmark's initiator, run as its own process so it never shares an event loop with a
 * target: libiscsi.so.7 through koffi, driven with libiscsi's async API and a poll() loop so
 * `--depth` commands can be in flight at once. It streams variable-length WRITE(6) or READ(6)
 * blocks to a tape LUN from beginning of tape and prints one JSON line with the timing.
 *
 *   node initiator.js --portal 127.0.0.1:3260 --target iqn... --lun 1 --mode write|read
 *                     --block 262144 --bytes 2147483648 [--depth 4]
 *
 * Every block carries its sequence number in its first 8 bytes and reads check it, so a
 * target that reorders or loses blocks fails the run instead of producing a figure. With
 * `--data FILE`, block n is instead bytes n × block to (n + 1) × block of FILE, unchanged (the
 * pool benchmark replays what fio writes, so both give the filesystem the same bytes to
 * compress), and reads check each block's first 8 bytes against the file's.
 */

/** libiscsi 1.19 `struct scsi_task` offsets (see scsi-lowlevel.h). */
const TASK_STATUS = 0;
const TASK_RESIDUAL_STATUS = 32;
const TASK_DATAIN_SIZE = 64;
const TASK_DATAIN_DATA = 72;
const SESSION_NORMAL = 2;
const XFER_NONE = 0;
const XFER_READ = 1;
const XFER_WRITE = 2;
const POLLIN = 1;
const POLLOUT = 4;
const SCSI_STATUS_GOOD = 0;
const SCSI_STATUS_CHECK_CONDITION = 2;

const so = koffi.load('libiscsi.so.7');
const libc = koffi.load('libc.so.6');
const CommandCallback = koffi.proto(
  'void bench_command_cb(void *iscsi, int status, void *command_data, intptr_t private_data)',
);
const iscsi = {
  createContext: so.func('void *iscsi_create_context(const char *initiator_name)'),
  setTargetName: so.func('int iscsi_set_targetname(void *iscsi, const char *name)'),
  setSessionType: so.func('int iscsi_set_session_type(void *iscsi, int type)'),
  fullConnect: so.func('int iscsi_full_connect_sync(void *iscsi, const char *portal, int lun)'),
  logout: so.func('int iscsi_logout_sync(void *iscsi)'),
  destroyContext: so.func('int iscsi_destroy_context(void *iscsi)'),
  getError: so.func('const char *iscsi_get_error(void *iscsi)'),
  getFd: so.func('int iscsi_get_fd(void *iscsi)'),
  whichEvents: so.func('int iscsi_which_events(void *iscsi)'),
  service: so.func('int iscsi_service(void *iscsi, int revents)'),
  createTask: so.func('void *scsi_create_task(int cdb_size, uint8_t *cdb, int xfer_dir, int expxferlen)'),
  freeTask: so.func('void scsi_free_scsi_task(void *task)'),
  addDataInBuffer: so.func('int scsi_task_add_data_in_buffer(void *task, int len, void *buf)'),
  commandAsync: so.func(
    'int iscsi_scsi_command_async(void *iscsi, int lun, void *task, bench_command_cb *cb, void *d, intptr_t private_data)',
  ),
};
const poll = libc.func('int poll(void *fds, unsigned long nfds, int timeout)');

interface Completion {
  status: number;
  scsiStatus: number;
  /** libiscsi's residual status: 0 none, 1 underflow, 2 overflow. */
  residualStatus: number;
  dataSize: number;
  sense: Buffer;
}

/** One logged-in session with a bounded window of commands in flight. */
class Session {
  private readonly pollFd = Buffer.alloc(8);
  private readonly done = new Map<number, Completion>();
  private readonly callback: bigint;
  private inFlight = 0;

  constructor(
    private readonly ctx: bigint,
    /** The MaxBurstLength the login settled on (the lower of both offers). */
    readonly maxBurst: number,
  ) {
    this.callback = koffi.register(
      (_ctx: bigint, status: number, task: bigint | null, slot: number) => this.complete(status, task, slot),
      koffi.pointer(CommandCallback),
    );
    this.pollFd.writeInt32LE(iscsi.getFd(ctx) as number, 0);
  }

  static connect(portal: string, target: string, maxBurst: number): Session {
    const ctx = iscsi.createContext('iqn.2025-01.io.vtl.bench:initiator') as bigint | null;
    if (!ctx) throw new Error('iscsi_create_context failed');
    const maxBurstAt = offerMaxBurst(ctx, maxBurst);
    iscsi.setTargetName(ctx, target);
    iscsi.setSessionType(ctx, SESSION_NORMAL);
    if (iscsi.fullConnect(ctx, portal, -1) !== 0) {
      throw new Error(`login to ${target} at ${portal} failed: ${iscsi.getError(ctx) as string}`);
    }
    return new Session(ctx, koffi.decode(ctx, maxBurstAt, 'uint32_t') as number);
  }

  get pending(): number {
    return this.inFlight;
  }

  /**
   * Queues a CDB; `slot` names it in the completion map. `dataOut` must live until it completes;
   * `dataIn`, when given, receives the data directly (libiscsi reads into it, no extra copy).
   */
  submit(slot: number, lun: number, cdb: Buffer, dataOut?: Buffer, dataInLength = 0, dataIn?: Buffer): void {
    const dir = dataOut ? XFER_WRITE : dataInLength > 0 ? XFER_READ : XFER_NONE;
    const task = iscsi.createTask(cdb.length, cdb, dir, dataOut ? dataOut.length : dataInLength) as bigint;
    if (!task) throw new Error('scsi_create_task failed');
    if (dataIn && iscsi.addDataInBuffer(task, dataIn.length, dataIn) !== 0) {
      throw new Error('scsi_task_add_data_in_buffer failed');
    }
    let descriptor: Buffer | null = null;
    if (dataOut) {
      // struct iscsi_data { size_t size; unsigned char *data; }: libiscsi keeps only the data pointer.
      descriptor = Buffer.alloc(16);
      descriptor.writeBigUInt64LE(BigInt(dataOut.length), 0);
      descriptor.writeBigUInt64LE(koffi.address(dataOut), 8);
    }
    if (iscsi.commandAsync(this.ctx, lun, task, this.callback, descriptor, slot) !== 0) {
      iscsi.freeTask(task);
      throw new Error(`iscsi_scsi_command_async failed: ${iscsi.getError(this.ctx) as string}`);
    }
    this.inFlight++;
  }

  /** Services the socket until at least one command completes; returns the completions. */
  reap(): Map<number, Completion> {
    while (this.done.size === 0) {
      const events = iscsi.whichEvents(this.ctx) as number;
      this.pollFd.writeInt16LE(events & (POLLIN | POLLOUT), 4);
      this.pollFd.writeInt16LE(0, 6);
      if ((poll(this.pollFd, 1, 1000) as number) < 0) throw new Error('poll failed');
      const revents = this.pollFd.readInt16LE(6);
      if (iscsi.service(this.ctx, revents) < 0) {
        throw new Error(`iscsi_service failed: ${iscsi.getError(this.ctx) as string}`);
      }
    }
    const out = new Map(this.done);
    this.done.clear();
    return out;
  }

  /** Runs one command to completion (nothing else may be in flight). */
  run(lun: number, cdb: Buffer, dataInLength = 0): Completion {
    this.submit(0, lun, cdb, undefined, dataInLength);
    return this.reap().get(0)!;
  }

  close(): void {
    iscsi.logout(this.ctx);
    iscsi.destroyContext(this.ctx);
    koffi.unregister(this.callback);
  }

  private complete(status: number, task: bigint | null, slot: number): void {
    this.inFlight--;
    const c: Completion = {
      status,
      scsiStatus: -1,
      residualStatus: 0,
      dataSize: 0,
      sense: Buffer.alloc(0),
    };
    if (task) {
      c.scsiStatus = koffi.decode(task, TASK_STATUS, 'int') as number;
      c.residualStatus = koffi.decode(task, TASK_RESIDUAL_STATUS, 'int') as number;
      c.dataSize = koffi.decode(task, TASK_DATAIN_SIZE, 'int') as number;
      const data = koffi.decode(task, TASK_DATAIN_DATA, 'void *') as bigint | null;
      if (data && c.scsiStatus === SCSI_STATUS_CHECK_CONDITION && c.dataSize > 2) {
        c.sense = Buffer.from(new Uint8Array(koffi.view(data, Math.min(c.dataSize, 64))));
      }
      iscsi.freeTask(task);
    }
    this.done.set(slot, c);
  }
}

/**
 * libiscsi's login defaults as four consecutive fields of its (private) context: MaxBurstLength,
 * FirstBurstLength, its own and the target's MaxRecvDataSegmentLength.
 */
const LOGIN_DEFAULTS = [262144, 262144, 262144, 8192];
/** The most of a context to search for them (they sit a few KiB in, after its name buffers). */
const CONTEXT_SEARCH_BYTES = 8192;

/**
 * Makes the login offer MaxBurstLength `bytes` instead of libiscsi's 256 KiB, which no call in
 * its API changes: a 1 MiB WRITE then needs one R2T instead of three, as from Linux's initiator
 * (open-iscsi offers 16776192). The field is found by its neighbours' default values and
 * written in place before the login; anything else stops the run rather than guess. Returns
 * where it is: the login leaves the negotiated value there.
 */
function offerMaxBurst(ctx: bigint, bytes: number): number {
  for (let offset = 0; offset + 4 * LOGIN_DEFAULTS.length <= CONTEXT_SEARCH_BYTES; offset += 4) {
    if (LOGIN_DEFAULTS.every((v, i) => koffi.decode(ctx, offset + 4 * i, 'uint32_t') === v)) {
      koffi.encode(ctx, offset, 'uint32_t', bytes);
      return offset;
    }
  }
  throw new Error(
    `libiscsi's MaxBurstLength was not found in its context; run with --max-burst ${LOGIN_DEFAULTS[0]}`,
  );
}

function check(what: string, c: Completion): void {
  if (c.status !== 0 || c.scsiStatus !== SCSI_STATUS_GOOD) {
    throw new Error(
      `${what}: iSCSI status ${c.status}, SCSI status ${c.scsiStatus}, sense ${c.sense.toString('hex')}`,
    );
  }
}

const cdb6 = (opcode: number, byte1: number, count: number): Buffer =>
  Buffer.from([opcode, byte1, (count >> 16) & 0xff, (count >> 8) & 0xff, count & 0xff, 0]);

/** Clears the unit attentions a fresh nexus sees (power on, medium loaded). */
function becomeReady(s: Session, lun: number): void {
  for (let i = 0; i < 10; i++) {
    if (s.run(lun, Buffer.from([0, 0, 0, 0, 0, 0])).scsiStatus === SCSI_STATUS_GOOD) return;
  }
  throw new Error(`LUN ${lun} is not ready after 10 TEST UNIT READY`);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      portal: { type: 'string' },
      target: { type: 'string' },
      lun: { type: 'string', default: '1' },
      mode: { type: 'string' },
      block: { type: 'string' },
      bytes: { type: 'string' },
      depth: { type: 'string', default: '4' },
      'max-burst': { type: 'string', default: String(LOGIN_DEFAULTS[0]) },
      data: { type: 'string' },
    },
  });
  const lun = Number(values.lun);
  const block = Number(values.block);
  const depth = Number(values.depth);
  const blocks = Math.floor(Number(values.bytes) / block);
  if (!values.portal || !values.target || !(block > 0) || !(blocks > 0) || !(depth >= 1)) {
    throw new Error(
      'usage: initiator.js --portal H:P --target IQN --lun N --mode write|read --block B --bytes N [--max-burst B]',
    );
  }
  if (values.mode !== 'write' && values.mode !== 'read') throw new Error('--mode is write or read');
  const writing = values.mode === 'write';
  const content = values.data === undefined ? undefined : openSync(values.data, 'r');
  /** Block `seq`'s bytes from the content file, `length` of them (all, or the first 8 to check a read). */
  const contentOf = (seq: number, into: Buffer, length: number) => {
    const got = readSync(content!, into, 0, length, seq * block);
    if (got !== length) throw new Error(`${values.data} has no block ${seq} of ${block} bytes`);
  };
  const expected = Buffer.alloc(8);

  const s = Session.connect(values.portal, values.target, Number(values['max-burst']));
  becomeReady(s, lun);
  check('REWIND', s.run(lun, cdb6(0x01, 0, 0)));

  // One data buffer per window slot: libiscsi sends from it, or receives into it, until the command completes.
  const buffers = Array.from({ length: depth }, () => Buffer.alloc(block, 0x5a));
  const cdb = writing ? cdb6(0x0a, 0, block) : cdb6(0x08, 0, block);
  const cpuBefore = process.cpuUsage();
  const busyBefore = machineBusySeconds();
  const start = process.hrtime.bigint();
  let next = 0;
  let completed = 0;
  let firstDone = 0n;
  const seqOfSlot = new Array<number>(depth).fill(-1);
  const freeSlots = Array.from({ length: depth }, (_, i) => i);
  while (completed < blocks) {
    while (next < blocks && freeSlots.length > 0) {
      const slot = freeSlots.pop()!;
      seqOfSlot[slot] = next;
      if (writing) {
        if (content === undefined) buffers[slot]!.writeBigUInt64LE(BigInt(next), 0);
        else contentOf(next, buffers[slot]!, block);
        s.submit(slot, lun, cdb, buffers[slot]);
      } else {
        buffers[slot]!.fill(0, 0, 8);
        s.submit(slot, lun, cdb, undefined, block, buffers[slot]);
      }
      next++;
    }
    for (const [slot, c] of s.reap()) {
      const seq = seqOfSlot[slot]!;
      check(`${writing ? 'WRITE' : 'READ'}(6) of block ${seq}`, c);
      if (c.residualStatus !== 0) throw new Error(`block ${seq} moved a short or long transfer`);
      if (!writing && content !== undefined) {
        contentOf(seq, expected, 8);
        if (!expected.equals(buffers[slot]!.subarray(0, 8)))
          throw new Error(`READ(6) of block ${seq} does not start with ${values.data}'s bytes`);
      } else {
        const got = writing ? seq : Number(buffers[slot]!.readBigUInt64LE(0));
        if (got !== seq) throw new Error(`READ(6) of block ${seq} returned block ${got}`);
      }
      freeSlots.push(slot);
      completed++;
    }
    if (firstDone === 0n) firstDone = process.hrtime.bigint();
  }
  const streamed = process.hrtime.bigint();
  // Over the stream only: the closing sync point waits on the disk with the cores idle.
  const busyCores = (machineBusySeconds() - busyBefore) / (Number(streamed - start) / 1e9);
  // WRITE FILEMARKS is the emulator's durability point; tgt gets an fsync from the caller.
  if (writing) check('WRITE FILEMARKS', s.run(lun, cdb6(0x10, 0, 1)));
  const end = process.hrtime.bigint();
  const seconds = Number(end - start) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  s.close();
  if (content !== undefined) closeSync(content);
  const result = {
    bytes: blocks * block,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    systemSeconds: cpu.system / 1e6,
    machineBusyCores: busyCores,
    maxBurst: s.maxBurst,
    // Where the time went: until the first block completed, and the closing sync point.
    firstSeconds: Number(firstDone - start) / 1e9,
    syncSeconds: Number(end - streamed) / 1e9,
    // CLOCK_MONOTONIC is one clock for every process: streams run at once are spanned with it.
    startNs: String(start),
    endNs: String(end),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
