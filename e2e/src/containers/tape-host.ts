import { randomBytes } from 'node:crypto';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { LibIscsiSession, type CommandResult } from '@vtl/emulator/testing/libiscsi';

/** 3573-TL element addresses (IBM layout): storage slot n (1-based) and the first drive. */
const SLOT = (n: number) => 0x1000 + n - 1;
const DRIVE_0 = 0x0100;
const BLOCK = 65_536;
const UNIT_ATTENTION = 0x06;

const senseKey = (r: CommandResult) => (r.sense.length > 2 ? r.sense[2]! & 0x0f : -1);
const failed = (what: string, r: CommandResult) =>
  new Error(`${what}: status ${r.status}, sense ${r.sense.toString('hex') || 'none'}`);

/**
 * A backup host of one node: logs in to that node's iSCSI target with Debian's libiscsi (a real
 * initiator), moves a cartridge into the drive with MOVE MEDIUM, writes or reads it, and moves it
 * home again, so the drive is empty between calls (an apply refuses a loaded drive). Each call
 * is its own session: nodes are killed and restarted between calls, and a session to a dead
 * target is of no more use.
 */
export class TapeHost {
  constructor(
    readonly portal: string,
    readonly initiator: string,
  ) {}

  /** Writes `blocks` blocks of fresh random data and a filemark to the cartridge in `slot`. */
  async write(slot: number, blocks: number): Promise<Buffer[]> {
    const data = Array.from({ length: blocks }, () => randomBytes(BLOCK));
    await this.withCartridge(slot, async (s) => {
      await expectGood(s, 'REWIND', Cdb.rewind());
      for (const [i, b] of data.entries()) await expectGood(s, `WRITE block ${i}`, Cdb.write6(b.length), b);
      await expectGood(s, 'WRITE FILEMARKS', Cdb.writeFilemarks(1));
    });
    return data;
  }

  /** Reads the cartridge in `slot` back; '' when every block equals `written`, else the first difference. */
  async verify(slot: number, written: Buffer[]): Promise<string> {
    return this.withCartridge(slot, async (s) => {
      await expectGood(s, 'REWIND', Cdb.rewind());
      for (const [i, b] of written.entries()) {
        const r = await s.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
        if (r.status !== 0) return `block ${i}: status ${r.status}, sense ${r.sense.toString('hex')}`;
        if (!r.data.equals(b)) return `block ${i} differs from what was written`;
      }
      return '';
    });
  }

  /** The target's name and the unit serial number (VPD page 80h) of its changer, LUN 0. */
  async changer(): Promise<{ target: string; serial: string }> {
    return this.withSession(async (s, target) => {
      await settle(s, 0);
      const r = await s.command(0, Cdb.inquiry(255, 0x80), { dataInLength: 255 });
      if (r.status !== 0) throw failed('INQUIRY VPD 80h', r);
      const serial = r.data
        .subarray(4, 4 + r.data[3]!)
        .toString('ascii')
        .trim();
      return { target, serial };
    });
  }

  /** A session of the caller's own (to hold across a fault); its unit attentions are consumed. */
  async login(): Promise<LibIscsiSession> {
    const { session } = await this.connect();
    await settle(session, 0);
    return session;
  }

  private async connect(): Promise<{ session: LibIscsiSession; target: string }> {
    const [target] = await LibIscsiSession.discover(this.portal, this.initiator);
    if (!target) throw new Error(`no iSCSI target at ${this.portal}`);
    const session = await LibIscsiSession.connect(this.portal, target.targetName, this.initiator, {
      timeoutSeconds: 30,
    });
    return { session, target: target.targetName };
  }

  private async withSession<T>(fn: (s: LibIscsiSession, target: string) => Promise<T>): Promise<T> {
    const { session, target } = await this.connect();
    try {
      return await fn(session, target);
    } finally {
      await session.close();
    }
  }

  private async withCartridge<T>(slot: number, fn: (s: LibIscsiSession) => Promise<T>): Promise<T> {
    return this.withSession(async (session) => {
      await move(session, SLOT(slot), DRIVE_0);
      try {
        await settle(session, 1);
        return await fn(session);
      } finally {
        await move(session, DRIVE_0, SLOT(slot));
      }
    });
  }
}

async function expectGood(s: LibIscsiSession, what: string, cdb: readonly number[], dataOut?: Buffer) {
  const r = await s.command(1, cdb, dataOut ? { dataOut } : {});
  if (r.status !== 0) throw failed(what, r);
}

/** TEST UNIT READY until the unit attentions a new nexus (or a new medium) raises are consumed. */
async function settle(s: LibIscsiSession, lun: number) {
  await waitFor(
    async () => {
      const r = await s.command(lun, Cdb.tur());
      return r.status === 0 || senseKey(r) !== UNIT_ATTENTION;
    },
    { timeoutMs: 15_000, intervalMs: 100 },
  );
}

async function move(s: LibIscsiSession, from: number, to: number) {
  await settle(s, 0);
  let last: CommandResult | undefined;
  // A drive that is still unloading (or a changer busy a moment) answers NOT READY: try again.
  await waitFor(
    async () => {
      last = await s.command(0, Cdb.moveMedium(from, to));
      return last.status === 0;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  ).catch(() => {
    throw failed(`MOVE MEDIUM ${from.toString(16)} -> ${to.toString(16)}`, last!);
  });
}
