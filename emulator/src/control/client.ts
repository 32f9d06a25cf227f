import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { VtlError, isErrorCode } from '@vtl/api/base';
import { LineReader, encodeLine } from './framing.js';
import type {
  EmuEvent,
  HelloResult,
  LoadResult,
  Method,
  MintBatchResult,
  MintResult,
  ParamsOf,
  Response,
  SetAccessResult,
  StatusResult,
  UnloadResult,
} from './protocol.js';

export interface EmulatorClientOptions {
  /** How long connect() keeps retrying while the emulator starts. Default 10 s. */
  timeoutMs?: number;
  /** First retry delay; doubles up to 2 s. Default 100 ms. */
  retryIntervalMs?: number;
  /** Reconnect by itself after the emulator goes away (restart). Default true. */
  reconnect?: boolean;
  /** A call with no reply by then fails with `timeout`. Default 60 s. */
  callTimeoutMs?: number;
}

interface ClientEvents {
  event: [EmuEvent];
  /** (Re)connected: a nodeagent resynchronises with status() here. */
  connect: [];
  /** The connection dropped (emulator stopped or died); pending calls failed with `unavailable`. */
  close: [];
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

const MAX_RETRY_MS = 2_000;

/**
 * The nodeagent's end of the control socket: typed calls that resolve with the result or
 * throw the emulator's VtlError, plus the event stream. Survives emulator restarts when
 * `reconnect` is on; calls made while disconnected fail at once with `unavailable`.
 */
export class EmulatorClient {
  private readonly emitter = new EventEmitter();
  private readonly pending = new Map<number, Pending>();
  private socket: Socket | undefined;
  private nextId = 1;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly opts: Required<EmulatorClientOptions>;

  private constructor(
    readonly socketPath: string,
    opts: EmulatorClientOptions,
  ) {
    this.opts = {
      timeoutMs: opts.timeoutMs ?? 10_000,
      retryIntervalMs: opts.retryIntervalMs ?? 100,
      reconnect: opts.reconnect ?? true,
      callTimeoutMs: opts.callTimeoutMs ?? 60_000,
    };
  }

  /** Connects, retrying until the emulator answers or timeoutMs passes. */
  static async connect(socketPath: string, opts: EmulatorClientOptions = {}): Promise<EmulatorClient> {
    const client = new EmulatorClient(socketPath, opts);
    const deadline = Date.now() + client.opts.timeoutMs;
    let delay = client.opts.retryIntervalMs;
    for (;;) {
      try {
        await client.attach();
        return client;
      } catch (err) {
        if (Date.now() + delay > deadline) {
          throw new VtlError(
            'unavailable',
            `no emulator answers on ${socketPath}: ${(err as Error).message}`,
          );
        }
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
  }

  get connected(): boolean {
    return this.socket !== undefined;
  }

  on<K extends keyof ClientEvents>(name: K, listener: (...args: ClientEvents[K]) => void): this {
    this.emitter.on(name, listener as (...args: unknown[]) => void);
    return this;
  }

  off<K extends keyof ClientEvents>(name: K, listener: (...args: ClientEvents[K]) => void): this {
    this.emitter.off(name, listener as (...args: unknown[]) => void);
    return this;
  }

  hello(): Promise<HelloResult> {
    return this.call('hello', undefined) as Promise<HelloResult>;
  }
  /**
   * Every library's status; with `since` (a tag from an earlier answer), `unchanged` and no
   * libraries while nothing changed since that answer.
   */
  status(params?: { since?: string }): Promise<StatusResult> {
    return this.call('status', params) as Promise<StatusResult>;
  }
  mint(params: ParamsOf<'mint'>): Promise<MintResult> {
    return this.call('mint', params) as Promise<MintResult>;
  }
  /** Mints many cartridges into one library in one call; each item is answered on its own. */
  mintBatch(params: ParamsOf<'mint_batch'>): Promise<MintBatchResult> {
    return this.call('mint_batch', params) as Promise<MintBatchResult>;
  }
  remove(params: ParamsOf<'remove'>): Promise<Record<string, never>> {
    return this.call('remove', params) as Promise<Record<string, never>>;
  }
  load(params: ParamsOf<'load'>): Promise<LoadResult> {
    return this.call('load', params) as Promise<LoadResult>;
  }
  unload(params: ParamsOf<'unload'>): Promise<UnloadResult> {
    return this.call('unload', params) as Promise<UnloadResult>;
  }
  /** Asks the emulator to exit cleanly; resolves once it has accepted. */
  shutdown(): Promise<Record<string, never>> {
    return this.call('shutdown', undefined) as Promise<Record<string, never>>;
  }

  /** Keeps a cartridge out of every drive while an offsite job works on it. */
  hold(params: ParamsOf<'hold'>): Promise<Record<string, never>> {
    return this.call('hold', params) as Promise<Record<string, never>>;
  }

  /** Ends a hold. */
  release(params: ParamsOf<'release'>): Promise<Record<string, never>> {
    return this.call('release', params) as Promise<Record<string, never>>;
  }

  /** Turns a cartridge image into a labelled stub (data deleted). */
  evict(params: ParamsOf<'evict'>): Promise<Record<string, never>> {
    return this.call('evict', params) as Promise<Record<string, never>>;
  }

  /** Replaces a cartridge image with the one unpacked in a staging directory of the same pool. */
  swapIn(params: ParamsOf<'swap_in'>): Promise<Record<string, never>> {
    return this.call('swap_in', params) as Promise<Record<string, never>>;
  }

  /** Replaces the iSCSI initiator registry; sessions of removed initiators drop, others stay. */
  setAccess(params: ParamsOf<'set_access'>): Promise<SetAccessResult> {
    return this.call('set_access', params) as Promise<SetAccessResult>;
  }

  /** Adds a cartridge unpacked in a staging directory to a free storage slot (recovery) or the first empty I/E slot. */
  placeInIe(params: ParamsOf<'place_in_ie'>): Promise<{ location: string }> {
    return this.call('place_in_ie', params) as Promise<{ location: string }>;
  }

  /** Moves a cartridge from an import/export slot back into a storage slot. */
  returnToSlot(params: ParamsOf<'return_to_slot'>): Promise<{ slot: number }> {
    return this.call('return_to_slot', params) as Promise<{ slot: number }>;
  }

  /** Stops reconnecting, fails pending calls and drops the connection. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.failPending(new VtlError('unavailable', 'emulator client closed'));
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 500).unref();
    });
  }

  private call<M extends Method>(method: M, params: ParamsOf<M>): Promise<unknown> {
    const socket = this.socket;
    if (!socket) {
      return Promise.reject(
        new VtlError('unavailable', `emulator on ${this.socketPath} is not connected; retry shortly`),
      );
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new VtlError('timeout', `emulator did not answer ${method} within ${this.opts.callTimeoutMs} ms`),
        );
      }, this.opts.callTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.write(encodeLine(params === undefined ? { id, method } : { id, method, params }));
    });
  }

  private attach(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(this.socketPath);
      const reader = new LineReader(
        (line) => this.receive(line),
        () => socket.destroy(new Error('emulator sent an oversized line')),
      );
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.on('error', () => undefined);
        socket.on('data', (chunk) => reader.push(chunk));
        socket.on('close', () => this.detached(socket));
        this.socket = socket;
        this.emitter.emit('connect');
        resolve();
      });
    });
  }

  private detached(socket: Socket): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.failPending(
      new VtlError('unavailable', 'emulator connection lost; the call may or may not have run'),
    );
    this.emitter.emit('close');
    if (this.opts.reconnect && !this.closed) this.scheduleReconnect(this.opts.retryIntervalMs);
  }

  private scheduleReconnect(delay: number): void {
    this.retryTimer = setTimeout(() => {
      if (this.closed) return;
      this.attach().then(
        () => {
          // close() may have run while the connection was being made.
          if (this.closed) this.socket?.destroy();
        },
        () => this.scheduleReconnect(Math.min(delay * 2, MAX_RETRY_MS)),
      );
    }, delay);
    this.retryTimer.unref();
  }

  private receive(line: string): void {
    let msg: Response | { event: EmuEvent };
    try {
      msg = JSON.parse(line) as Response | { event: EmuEvent };
    } catch {
      return;
    }
    if ('event' in msg) {
      this.emitter.emit('event', msg.event);
      return;
    }
    const waiting = this.pending.get(msg.id);
    if (!waiting) return;
    this.pending.delete(msg.id);
    clearTimeout(waiting.timer);
    if (msg.ok) waiting.resolve(msg.result);
    else {
      const code = msg.error.code;
      waiting.reject(new VtlError(isErrorCode(code) ? code : 'internal', msg.error.message));
    }
  }

  private failPending(err: VtlError): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }
}
