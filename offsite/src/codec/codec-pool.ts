import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { OffsiteError } from '../errors.js';
import type { DownloadResult } from './http-download.js';
import type { CodecReply, CodecRequest } from './messages.js';

/** Both src/codec (tests) and dist/codec resolve to the built worker. */
const WORKER_FILE = join(import.meta.dirname, '../../dist/codec/codec-worker.js');

/** Codec threads yield to the data plane by default (the nodeagent's VTL_CODEC_NICE sets it). */
export const DEFAULT_CODEC_NICE = 5;
/**
 * Imports' downloads (fetch: SHA-256 and zstd -d as the bytes arrive) run at normal priority:
 * at nice 5 on a busy machine they got a third of a core's share and spent eight times their
 * CPU time waiting for one (docs/performance.md, Offsite), while their CPU per byte is a
 * fraction of compression's. Compression and check-only unpacks keep `nice`.
 */
export const DEFAULT_IMPORT_NICE = 0;
/**
 * zstd's level for exports (the nodeagent's VTL_ZSTD_LEVEL sets it). 3, zstd's own default:
 * on real backup data (binaries, documents, source trees) it stores 11–16 % fewer bytes than
 * level 1 for about 1.6–1.8 × its CPU; where the appliance's cores, not the link to the
 * bucket, bound an export, level 1 is the faster choice (README, "Offsite copies").
 */
export const DEFAULT_ZSTD_LEVEL = 3;
/** The levels an operator may choose (zstd's regular range; 20–22 need far more memory). */
export const ZSTD_LEVELS = { min: 1, max: 19 } as const;

type Compute = Exclude<CodecRequest, { op: 'download' } | { op: 'fetch' } | { op: 'cancel' }>;
type Transfer = Extract<CodecRequest, { op: 'download' } | { op: 'fetch' }>;
type TransferReply = Extract<CodecReply, { ok: 'download' }>;
type Request = Compute extends infer R ? (R extends Compute ? Omit<R, 'id'> : never) : never;
type Success = CodecReply & { ok: true };

interface Task {
  msg: Request;
  resolve: (reply: Success) => void;
  reject: (err: Error) => void;
}

/** One thread and the task it is running. */
interface Slot {
  worker: Worker;
  busy: Task | undefined;
  /** Downloads running on this thread, by request id. */
  downloads: Map<number, (r: TransferReply) => void>;
}

/** What compress() made: the first `stored_bytes` of `out`, and their SHA-256. */
export interface Compressed {
  stored_bytes: number;
  sha256: string;
}

/** What a stored chunk must hash and decompress to; `name` goes into 'verify_failed' messages. */
export interface ChunkExpectation {
  sha256: string;
  raw_bytes: number;
  name: string;
}

/**
 * Worker threads (default one per core) doing zstd and SHA-256 off the event loop, on buffers
 * in shared memory (BufferRing) that the threads read and write in place. Tasks queue when
 * every thread is busy; callers bound how many chunks they hand in, which bounds memory. One
 * pool serves every transfer of a process.
 */
export class CodecPool {
  readonly threads: number;
  readonly level: number;
  /** Nice value of the codec threads on Linux (default DEFAULT_CODEC_NICE; the nodeagent passes VTL_CODEC_NICE); 0: normal priority. */
  readonly nice: number;
  /** Nice value of a thread while it runs only downloads (default DEFAULT_IMPORT_NICE). */
  readonly importNice: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private nextDownload = 0;
  private closed = false;

  constructor(opts: { threads?: number; level?: number; nice?: number; importNice?: number } = {}) {
    this.threads = Math.max(1, opts.threads ?? availableParallelism());
    this.level = opts.level ?? DEFAULT_ZSTD_LEVEL;
    this.nice = opts.nice ?? DEFAULT_CODEC_NICE;
    // Never above `nice`: a pool asked to run at normal priority runs so throughout.
    this.importNice = Math.min(opts.importNice ?? DEFAULT_IMPORT_NICE, this.nice);
  }

  /** zstd of `raw` into `out` (at least compressBound(raw.length) long) and its SHA-256. */
  async compress(raw: Uint8Array, out: Uint8Array): Promise<Compressed> {
    shared(raw, out);
    const reply = await this.run({ op: 'compress', raw, out, level: this.level });
    return { stored_bytes: reply.stored_bytes as number, sha256: reply.sha256 as string };
  }

  /**
   * Checks `stored` against its SHA-256, decompresses it into `raw` (exactly raw_bytes long;
   * zstd checks its frame checksum) and returns the all-zero map of `raw`: 1 per ZERO_BLOCK.
   * 'verify_failed' naming the chunk when anything does not match.
   */
  async unpack(stored: Uint8Array, raw: Uint8Array, expect: ChunkExpectation): Promise<Uint8Array> {
    shared(stored, raw);
    const reply = await this.run({ op: 'unpack', stored, raw, ...expect });
    return reply.zero as Uint8Array;
  }

  /** What unpack() checks, without keeping the tar bytes. */
  async check(stored: Uint8Array, expect: ChunkExpectation): Promise<void> {
    shared(stored);
    await this.run({ op: 'unpack', stored, raw: undefined, ...expect });
  }

  /**
   * GETs a presigned S3 request into `into` on a codec thread (exactly the object's size), so
   * the event loop never touches the bytes. Runs beside compute tasks; never rejects.
   */
  download(
    request: { url: string; headers: Record<string, string> },
    into: Uint8Array,
    opts: { idleTimeoutMs: number; signal?: AbortSignal },
  ): Promise<DownloadResult> {
    shared(into);
    return this.transfer(
      { op: 'download', ...request, into, idleTimeoutMs: opts.idleTimeoutMs },
      opts.signal,
    ).then((reply) => reply.result);
  }

  /**
   * GETs a presigned S3 request of a stored chunk on a codec thread and checks and unpacks it
   * while it arrives (SHA-256, zstd into `raw`, exactly raw_bytes long): what download() then
   * unpack() do, overlapped, and without a copy of the stored bytes. A failed check ends with
   * `verify` in the result; the zero map and the thread's stage times come with success.
   */
  fetch(
    request: { url: string; headers: Record<string, string> },
    raw: Uint8Array,
    expect: ChunkExpectation & { stored_bytes: number },
    opts: { idleTimeoutMs: number; signal?: AbortSignal },
  ): Promise<TransferReply> {
    shared(raw);
    return this.transfer(
      {
        op: 'fetch',
        ...request,
        raw,
        stored_bytes: expect.stored_bytes,
        raw_bytes: expect.raw_bytes,
        sha256: expect.sha256,
        name: expect.name,
        idleTimeoutMs: opts.idleTimeoutMs,
      },
      opts.signal,
    );
  }

  /** Runs a download-like request beside compute tasks; never rejects. */
  private transfer(msg: DistributiveOmit<Transfer, 'id'>, signal?: AbortSignal): Promise<TransferReply> {
    if (this.closed) {
      const message = 'the codec pool was closed';
      return Promise.resolve({
        id: 0,
        ok: 'download',
        result: { ok: false, status: 0, errno: 'ECONNABORTED', message },
      });
    }
    const slot = this.spawn() ?? (this.slots[this.nextDownload++ % this.slots.length] as Slot);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const onAbort = () =>
        slot.worker.postMessage({ op: 'cancel', id: 0, target: id } satisfies CodecRequest);
      signal?.addEventListener('abort', onAbort, { once: true });
      slot.downloads.set(id, (r) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      });
      slot.worker.ref();
      slot.worker.postMessage({ ...msg, id } as CodecRequest);
    });
  }

  /** Stops every thread; queued tasks fail with 'aborted'. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.reject(new OffsiteError('aborted', 'the codec pool was closed'));
    const all = this.slots.splice(0);
    for (const s of all) {
      s.busy?.reject(new OffsiteError('aborted', 'the codec pool was closed'));
      for (const d of s.downloads.values())
        d({
          id: 0,
          ok: 'download',
          result: { ok: false, status: 0, errno: 'ECONNABORTED', message: 'the codec pool was closed' },
        });
    }
    await Promise.all(all.map((s) => s.worker.terminate()));
  }

  private run(msg: Request): Promise<Success> {
    if (this.closed) return Promise.reject(new OffsiteError('aborted', 'the codec pool was closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ msg, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => !s.busy) ?? this.spawn();
      if (!slot) return;
      const task = this.queue.shift() as Task;
      slot.busy = task;
      // A busy thread keeps the process alive until its answer arrives; an idle one does not.
      slot.worker.ref();
      slot.worker.postMessage({ ...task.msg, id: this.nextId++ });
    }
  }

  private spawn(): Slot | undefined {
    if (this.slots.length >= this.threads) return undefined;
    const slot: Slot = {
      worker: new Worker(WORKER_FILE, { workerData: { nice: this.nice, importNice: this.importNice } }),
      busy: undefined,
      downloads: new Map(),
    };
    slot.worker.unref();
    // A thread keeps the process alive only while it owes an answer.
    const idle = () => {
      if (!slot.busy && slot.downloads.size === 0) slot.worker.unref();
    };
    slot.worker.on('message', (reply: CodecReply) => {
      if (reply.ok === 'download') {
        const d = slot.downloads.get(reply.id);
        slot.downloads.delete(reply.id);
        idle();
        d?.(reply);
        return;
      }
      const task = slot.busy;
      slot.busy = undefined;
      idle();
      if (task) settle(task, reply);
      this.dispatch();
    });
    slot.worker.on('error', (err) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      slot.busy?.reject(new Error(`a codec thread failed: ${err.message}`));
      slot.busy = undefined;
      for (const d of slot.downloads.values())
        d({
          id: 0,
          ok: 'download',
          result: {
            ok: false,
            status: 0,
            errno: 'ECONNRESET',
            message: `a codec thread failed: ${err.message}`,
          },
        });
      slot.downloads.clear();
      void slot.worker.terminate();
      this.dispatch();
    });
    this.slots.push(slot);
    return slot;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function settle(task: Task, reply: CodecReply): void {
  if (reply.ok === 'download') return;
  if (reply.ok) task.resolve(reply);
  else if (reply.code === 'verify_failed') task.reject(new OffsiteError('verify_failed', reply.message));
  else task.reject(new Error(reply.message));
}

/** The threads work in place: a buffer that is not shared memory would be copied, and lost. */
function shared(...bufs: Uint8Array[]): void {
  for (const b of bufs) {
    if (!(b.buffer instanceof SharedArrayBuffer))
      throw new Error('codec buffers must be views of a SharedArrayBuffer (BufferRing)');
  }
}
