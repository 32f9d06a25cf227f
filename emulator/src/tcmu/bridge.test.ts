import net from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSense } from '../scsi/sense.js';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import { startTcmuBridge, type TcmuBridge } from './bridge.js';
import { resolveTcmuConfig } from './dev-config.js';
import { encodeCommand, encodeHello } from './wire.js';

const TARGET = 'iqn.2026-11.io.vtl:test-node';
const CHANGER = 0;
const DRIVE = 1;

interface Answer {
  id: number;
  status: number;
  sense: Buffer;
  data: Buffer;
}

/** Plays vtl-tcmu's part: one connection per backstore, answers read back in order. */
class FrontEnd {
  private buf = Buffer.alloc(0);
  private waiters: ((a: Answer) => void)[] = [];
  private answers: Answer[] = [];
  private nextId = 1;
  closed: Promise<void>;
  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readUInt32BE(0)) {
        const len = this.buf.readUInt32BE(0);
        const f = this.buf.subarray(4, 4 + len);
        const senseLen = f[3]!;
        const a = {
          id: f.readUInt16BE(0),
          status: f[2]!,
          sense: Buffer.from(f.subarray(8, 8 + senseLen)),
          data: Buffer.from(f.subarray(8 + senseLen, 8 + senseLen + f.readUInt32BE(4))),
        };
        this.buf = this.buf.subarray(4 + len);
        const w = this.waiters.shift();
        if (w) w(a);
        else this.answers.push(a);
      }
    });
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()));
  }

  static async open(bridge: TcmuBridge, config: string): Promise<FrontEnd> {
    const [host, port] = bridge.address.split(':');
    const socket = net.connect(Number(port), host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(encodeHello(config));
    return new FrontEnd(socket);
  }

  send(cdb: number[], opts: { dataOut?: Buffer; buffer?: number } = {}): number {
    const id = this.nextId++;
    this.socket.write(
      encodeCommand({
        id,
        cdb: Buffer.from(cdb),
        bufferLength: opts.dataOut?.length ?? opts.buffer ?? 0,
        dataOut: opts.dataOut,
      }),
    );
    return id;
  }

  answer(): Promise<Answer> {
    const a = this.answers.shift();
    return a ? Promise.resolve(a) : new Promise((resolve) => this.waiters.push(resolve));
  }

  async exec(cdb: number[], opts: { dataOut?: Buffer; buffer?: number } = {}): Promise<Answer> {
    const id = this.send(cdb, opts);
    const a = await this.answer();
    expect(a.id).toBe(id);
    return a;
  }

  /** Until the unit attentions of power-on (and medium changes) are consumed. */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) if ((await this.exec(Cdb.tur())).status === 0) return;
  }
}

describe('the TCMU bridge runs front-end commands on the emulator devices', () => {
  let t: LibraryTarget;
  let bridge: TcmuBridge;
  afterEach(async () => {
    await bridge?.stop();
    await t?.stop();
  });
  const start = async () => {
    t = await startLibraryTarget([{ id: 1, generation: 8 }]);
    bridge = await startTcmuBridge({
      listen: '127.0.0.1:0',
      resolve: (config) => resolveTcmuConfig(config, TARGET, t.devices.luns),
      logger: pino({ level: 'silent' }),
    });
  };

  it('answers INQUIRY with the device the dev_config names, truncated to the host buffer', async () => {
    await start();
    const changer = await FrontEnd.open(bridge, `vtl/${TARGET}:lun${CHANGER}`);
    const drive = await FrontEnd.open(bridge, `vtl/${TARGET}:lun${DRIVE}`);
    const c = await changer.exec(Cdb.inquiry(96), { buffer: 96 });
    expect(c.status).toBe(0);
    expect(c.data[0]! & 0x1f).toBe(8);
    const d = await drive.exec(Cdb.inquiry(255), { buffer: 36 });
    expect(d.data[0]! & 0x1f).toBe(1);
    expect(d.data.length).toBe(36);
    expect(bridge.connections()).toBe(2);
  });

  it('moves a cartridge into the drive, writes and reads blocks back byte-exactly, in order', async () => {
    await start();
    await t.mint(1, 'TC0001L8', 1);
    const changer = await FrontEnd.open(bridge, `vtl/${TARGET}:lun${CHANGER}`);
    const drive = await FrontEnd.open(bridge, `vtl/${TARGET}:lun${DRIVE}`);
    await changer.settle();
    const res = await changer.exec(Cdb.readElementStatus(0, 0, 0xffff, { voltag: true, alloc: 0xffff }), {
      buffer: 0xffff,
    });
    expect(res.status).toBe(0);
    expect(res.data.includes(Buffer.from('TC0001L8'))).toBe(true);
    await t.dp.library(1).inventory.load(0, 'TC0001L8');
    await drive.settle();
    expect((await drive.exec(Cdb.rewind())).status).toBe(0);
    const blocks = [Buffer.alloc(10240, 0x41), Buffer.alloc(65536, 0x42), Buffer.alloc(512, 0x43)];
    // Pipelined: the answers still come in command order.
    const ids = blocks.map((b) => drive.send(Cdb.write6(b.length), { dataOut: b }));
    for (const id of ids) expect(await drive.answer()).toMatchObject({ id, status: 0 });
    expect((await drive.exec(Cdb.writeFilemarks(1))).status).toBe(0);
    expect((await drive.exec(Cdb.rewind())).status).toBe(0);
    for (const b of blocks) {
      const r = await drive.exec(Cdb.read6(65536), { buffer: 65536 });
      // A short block (CHECK CONDITION, ILI): only the block's bytes come back.
      expect(r.data.equals(b)).toBe(true);
    }
    const fm = await drive.exec(Cdb.read6(1024), { buffer: 1024 });
    expect(parseSense(fm.sense)).toMatchObject({ filemark: true });
  });

  it('refuses a data-out command that came without its data, and keeps serving', async () => {
    await start();
    const drive = await FrontEnd.open(bridge, `vtl/${TARGET}:lun${DRIVE}`);
    await drive.settle();
    const r = await drive.exec(Cdb.modeSelect6(12), { buffer: 12 });
    expect(r.status).toBe(2);
    expect(parseSense(r.sense)).toMatchObject({ key: 5, asc: 0x20 });
    expect((await drive.exec(Cdb.tur())).id).toBeGreaterThan(0);
  });

  it('closes a stream that is not vtl-tcmu or names a device it does not serve', async () => {
    await start();
    const other = await FrontEnd.open(bridge, `vtl/iqn.2026-11.io.vtl:another-node:lun0`);
    await other.closed;
    const [host, port] = bridge.address.split(':');
    const junk = net.connect(Number(port), host);
    junk.write('GET / HTTP/1.1\r\n\r\n');
    await new Promise((resolve) => junk.on('close', resolve));
    expect(bridge.connections()).toBe(0);
  });
});
