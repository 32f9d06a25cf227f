import { createHash } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import binding from 'zstd-napi/binding.js';
import { cancelDownload, download, intoBuffer } from './http-download.js';
import { StreamUnpack } from './stream-unpack.js';
import { ZERO_BLOCK, type CodecReply, type CodecRequest } from './messages.js';

/*
 * One codec thread: zstd and SHA-256 on whole chunks in shared memory, so the event loop of
 * the process never spends more than a message post on them.
 */

/** This thread's kernel id (Linux: a thread has its own nice value), or 0 elsewhere. */
const tid = (() => {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) && id > 0 ? id : 0;
  } catch {
    return 0;
  }
})();
const data = (workerData ?? {}) as { nice?: number; importNice?: number };
/** Nice value while compressing or checking (bulk CPU): the event loop and the emulator win. */
const computeNice = data.nice ?? 0;
/**
 * Nice value while only imports' downloads run here: they are mostly waiting on sockets, and
 * their hashing and decompression cost a fraction of compression's CPU per byte.
 */
const importNice = data.importNice ?? computeNice;
let currentNice = (() => {
  try {
    return tid ? getPriority(tid) : 0;
  } catch {
    return 0;
  }
})();
/** Transfers (download, fetch) running on this thread. */
let transfers = 0;

/**
 * Sets this thread's scheduling priority. Lowering is always allowed; raising it again needs
 * CAP_SYS_NICE (the appliance runs as root), so without it the thread keeps the lower priority
 * once it has compressed, as before.
 */
function setNice(nice: number): void {
  if (nice === currentNice || !tid) return;
  try {
    setPriority(tid, nice);
    currentNice = nice;
  } catch {
    // Not permitted: keep the current priority.
  }
}
setNice(importNice);

const compressors = new Map<number, binding.CCtx>();
const decompressor = new binding.DCtx();
const ZEROES = Buffer.alloc(ZERO_BLOCK);
/** Destination of check-only unpacks, grown to the largest chunk seen. */
let scratch = new Uint8Array(0);

function compressorFor(level: number): binding.CCtx {
  let c = compressors.get(level);
  if (!c) {
    c = new binding.CCtx();
    // Single-threaded, fixed level, content checksum on: the same tar gives the same bytes, and
    // decompression checks the tar bytes against the checksum.
    c.setParameter(binding.CParameter.compressionLevel, level);
    c.setParameter(binding.CParameter.checksumFlag, 1);
    c.setParameter(binding.CParameter.contentSizeFlag, 1);
    compressors.set(level, c);
  }
  return c;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** 1 for each ZERO_BLOCK of `raw` that is all zero bytes. */
function zeroMap(raw: Uint8Array): Uint8Array {
  const blocks = Math.ceil(raw.length / ZERO_BLOCK);
  const map = new Uint8Array(blocks);
  const view = Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  for (let b = 0; b < blocks; b++) {
    const part = view.subarray(b * ZERO_BLOCK, (b + 1) * ZERO_BLOCK);
    if (part.equals(part.length === ZERO_BLOCK ? ZEROES : ZEROES.subarray(0, part.length))) map[b] = 1;
  }
  return map;
}

function failed(id: number, message: string): CodecReply {
  return { id, ok: false, code: 'verify_failed', message };
}

type ComputeRequest = Exclude<CodecRequest, { op: 'download' } | { op: 'fetch' } | { op: 'cancel' }>;

function handle(msg: ComputeRequest): CodecReply {
  switch (msg.op) {
    case 'compress': {
      const n = compressorFor(msg.level).compress2(msg.out, msg.raw);
      return { id: msg.id, ok: true, stored_bytes: n, sha256: sha256(msg.out.subarray(0, n)) };
    }
    case 'unpack': {
      const got = sha256(msg.stored);
      if (got !== msg.sha256) {
        return failed(
          msg.id,
          `${msg.name}: SHA-256 ${got} of ${msg.stored.length} bytes does not match the recorded ${msg.sha256}`,
        );
      }
      let dest = msg.raw;
      if (!dest) {
        if (scratch.length < msg.raw_bytes) scratch = new Uint8Array(msg.raw_bytes);
        dest = scratch.subarray(0, msg.raw_bytes);
      }
      let n: number;
      try {
        // Fails on a content checksum mismatch, and when the data does not fit raw_bytes.
        n = decompressor.decompress(dest, msg.stored);
      } catch (err) {
        return failed(
          msg.id,
          `${msg.name}: does not decompress to its ${msg.raw_bytes} tar bytes (${(err as Error).message})`,
        );
      }
      if (n !== msg.raw_bytes) {
        return failed(msg.id, `${msg.name}: decompresses to ${n} bytes, the manifest says ${msg.raw_bytes}`);
      }
      return msg.raw ? { id: msg.id, ok: true, zero: zeroMap(msg.raw) } : { id: msg.id, ok: true };
    }
  }
}

/** Counts a transfer running until `done` settles, at the import priority meanwhile. */
function transfer<T>(done: Promise<T>): Promise<T> {
  transfers++;
  setNice(importNice);
  return done.finally(() => transfers--);
}

parentPort?.on('message', (msg: CodecRequest) => {
  if (msg.op === 'download') {
    // I/O, not CPU: runs alongside compute tasks on this thread's event loop.
    void transfer(download(msg.id, msg.url, msg.headers, intoBuffer(msg.into), msg.idleTimeoutMs)).then(
      (result) => parentPort?.postMessage({ id: msg.id, ok: 'download', result } satisfies CodecReply),
    );
    return;
  }
  if (msg.op === 'fetch') {
    // Network and CPU interleaved: each piece is hashed and decompressed as it arrives.
    const sink = new StreamUnpack(msg.raw, msg);
    void transfer(download(msg.id, msg.url, msg.headers, sink, msg.idleTimeoutMs)).then((result) => {
      if (!result.ok) {
        sink.release();
        parentPort?.postMessage({ id: msg.id, ok: 'download', result } satisfies CodecReply);
        return;
      }
      const bad = sink.finish();
      parentPort?.postMessage({
        id: msg.id,
        ok: 'download',
        result: bad === undefined ? result : { ok: false, status: 200, verify: bad },
        zero: sink.zero,
        times: sink.times,
      } satisfies CodecReply);
    });
    return;
  }
  if (msg.op === 'cancel') {
    cancelDownload(msg.target);
    return;
  }
  let reply: CodecReply;
  setNice(computeNice);
  try {
    reply = handle(msg);
  } catch (err) {
    reply = { id: msg.id, ok: false, message: (err as Error).message };
  }
  // Downloads interleaved with this task go on at their own priority.
  if (transfers > 0) setNice(importNice);
  parentPort?.postMessage(reply);
});
