import fs from 'node:fs/promises';
import net from 'node:net';
import type { Logger } from 'pino';
import { checkCondition } from '../scsi/result.js';
import { Sense } from '../scsi/sense.js';
import type { ScsiDevice, ScsiResult } from '../scsi/types.js';
import { TcmuFrameReader, encodeAnswer, type TcmuCommandFrame } from './wire.js';

/** The device a backstore's dev_config names, and the LUN it is in the emulator's table. */
export interface TcmuTarget {
  device: ScsiDevice;
  lun: number;
}

export interface TcmuBridgeOptions {
  /** `IPV4:PORT` (port 0: any) or a unix socket path. */
  listen: string;
  /** Resolves a backstore's dev_config (`vtl/<device name>`); undefined: not ours. */
  resolve(config: string): TcmuTarget | undefined;
  logger: Logger;
}

export interface TcmuBridge {
  /** Where the front end connects: `IPV4:PORT` or the unix socket path. */
  address: string;
  /** Open front-end connections (one per served backstore). */
  connections(): number;
  stop(): Promise<void>;
}

/**
 * The I_T nexus the emulator's SCSI core sees for every command of one backstore. A TCMU
 * command carries no initiator identity, so all hosts reaching a LUN through LIO share it;
 * reservations stay correct because LIO itself runs PERSISTENT RESERVE and RESERVE/RELEASE
 * keyed by the real FC (or loopback) nexus and refuses conflicting commands before they reach
 * userspace (docs/fc.md).
 */
export const tcmuNexus = (config: string) => `lio-tcmu:${config}`;

/** Executes one framed command on the device and returns its answer. */
export async function runTcmuCommand(
  target: TcmuTarget,
  config: string,
  f: TcmuCommandFrame,
): Promise<ScsiResult> {
  const wanted = target.device.dataOutLength(f.cdb);
  if (wanted > 0 && !f.dataOut) {
    // The front end's opcode table and the device disagree: refuse rather than run a write
    // with no data (the log says which opcode needs adding to is_data_out()).
    throw new DataDirectionError(f.cdb[0]!);
  }
  return target.device.execute({
    cdb: f.cdb,
    dataOut: f.dataOut && wanted > 0 ? f.dataOut.subarray(0, wanted) : undefined,
    expectedDataInLength: f.dataOut ? 0 : f.bufferLength,
    initiator: tcmuNexus(config),
    lun: target.lun,
  });
}

class DataDirectionError extends Error {
  constructor(readonly opcode: number) {
    super(`opcode 0x${opcode.toString(16)} transfers data-out, but the handler sent none`);
  }
}

/** The data-in the kernel gets: never more than the host's buffer, less when the device says so. */
function dataInOf(result: ScsiResult, bufferLength: number): Buffer | undefined {
  if (!result.dataIn) return undefined;
  let n = Math.min(result.dataIn.length, bufferLength);
  if (result.residual !== undefined) n = Math.min(n, Math.max(0, bufferLength - result.residual));
  return result.dataIn.subarray(0, n);
}

function serve(socket: net.Socket, opts: TcmuBridgeOptions): void {
  const reader = new TcmuFrameReader();
  let config: string | undefined;
  let target: TcmuTarget | undefined;
  let log = opts.logger;
  // Answers go back in arrival order (the front end completes the ring in order): one chain.
  let chain: Promise<void> = Promise.resolve();
  const fail = (err: Error) => {
    log.warn({ err: err.message }, 'TCMU front-end stream refused; closing it');
    socket.destroy();
  };
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => {
    reader.push(chunk);
    try {
      if (config === undefined) {
        config = reader.hello();
        if (config === undefined) return;
        target = opts.resolve(config);
        log = opts.logger.child({ backstore: config });
        if (!target) {
          log.warn('a TCMU backstore names a device this emulator does not serve: check its dev_config');
          socket.destroy();
          return;
        }
        log.info({ lun: target.lun }, 'TCMU backstore connected');
      }
      for (let f = reader.next(); f; f = reader.next()) {
        const frame = f;
        chain = chain.then(async () => {
          let result: ScsiResult;
          try {
            result = await runTcmuCommand(target!, config!, frame);
          } catch (err) {
            log.error({ err, opcode: frame.cdb[0] }, 'TCMU command failed inside the emulator');
            result =
              err instanceof DataDirectionError
                ? checkCondition(Sense.invalidOpcode())
                : checkCondition(Sense.internalFailure());
          }
          if (socket.destroyed) return;
          const parts = encodeAnswer({
            id: frame.id,
            status: result.status,
            sense: result.sense,
            dataIn: dataInOf(result, frame.bufferLength),
          });
          socket.cork();
          for (const p of parts) socket.write(p);
          socket.uncork();
        });
      }
    } catch (err) {
      fail(err as Error);
    }
  });
  socket.on('error', (err) => log.debug({ err: err.message }, 'TCMU front-end connection error'));
  socket.on('close', () => {
    if (config !== undefined) log.info('TCMU backstore disconnected');
  });
}

/** Listens for the TCMU front end and runs its commands on the emulator's devices. */
export async function startTcmuBridge(opts: TcmuBridgeOptions): Promise<TcmuBridge> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket, opts);
  });
  const tcp = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(opts.listen);
  if (!tcp) await fs.rm(opts.listen, { force: true }); // a stale socket file of a dead emulator
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (tcp) server.listen(Number(tcp[2]), tcp[1], resolve);
    else server.listen(opts.listen, resolve);
  });
  const addr = server.address();
  const address = typeof addr === 'object' && addr ? `${addr.address}:${addr.port}` : opts.listen;
  opts.logger.info({ address }, 'TCMU bridge listening');
  return {
    address,
    connections: () => sockets.size,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
