import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);
const KEY_A = Buffer.alloc(32, 0xa5);
const KEY_B = Buffer.alloc(32, 0x5b);

const spin = (protocol: number, page: number, allocation = 8192) => {
  const cdb = Buffer.alloc(12);
  cdb[0] = 0xa2;
  cdb[1] = protocol;
  cdb.writeUInt16BE(page, 2);
  cdb.writeUInt32BE(allocation, 6);
  return cdb;
};
const spout = (length: number) => {
  const cdb = Buffer.alloc(12);
  cdb[0] = 0xb5;
  cdb[1] = 0x20;
  cdb.writeUInt16BE(0x0010, 2);
  cdb.writeUInt32BE(length, 6);
  return cdb;
};

interface Sde {
  scope?: number;
  lock?: boolean;
  enc?: number;
  dec?: number;
  key?: Buffer;
  ukad?: string;
  flags?: number;
  algorithm?: number;
}

/** A Set Data Encryption page (SSC-4 8.5.3.2). */
function sde(o: Sde): Buffer {
  const key = o.key ?? Buffer.alloc(0);
  const kad = o.ukad
    ? Buffer.concat([Buffer.from([0, 0, 0, o.ukad.length]), Buffer.from(o.ukad)])
    : Buffer.alloc(0);
  const p = Buffer.alloc(20 + key.length + kad.length);
  p.writeUInt16BE(0x0010, 0);
  p.writeUInt16BE(p.length - 4, 2);
  p[4] = ((o.scope ?? 2) << 5) | (o.lock ? 1 : 0);
  p[5] = o.flags ?? 0;
  p[6] = o.enc ?? 0;
  p[7] = o.dec ?? 0;
  p[8] = o.algorithm ?? (o.enc || o.dec ? 1 : 0);
  p.writeUInt16BE(key.length, 18);
  key.copy(p, 20);
  kad.copy(p, 20 + key.length);
  return p;
}

async function setEncryption(h: ScsiHost, o: Sde): Promise<HostResult> {
  const page = sde(o);
  return h.exec(DRIVE, spout(page.length), { dataOut: page });
}

async function loaded(label: string): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: 8 }]);
  await t.mint(1, label, 1);
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  await t.dp.library(1).inventory.load(0, label);
  await h.exec(DRIVE, Cdb.tur());
  return h;
}

async function status(h: ScsiHost) {
  const r = await h.exec(DRIVE, spin(0x20, 0x0020), { allocation: 8192 });
  ok(r);
  return {
    nexusScope: r.data[4]! >> 5,
    keyScope: r.data[4]! & 7,
    enc: r.data[5],
    dec: r.data[6],
    instance: r.data.readUInt32BE(8),
    vcelb: (r.data[12]! & 0x08) !== 0,
    kad: r.data.length > 24 ? r.data.subarray(28, 28 + r.data.readUInt16BE(26)).toString() : '',
  };
}

async function nextBlock(h: ScsiHost) {
  const r = await h.exec(DRIVE, spin(0x20, 0x0021), { allocation: 8192 });
  ok(r);
  return {
    object: Number(r.data.readBigUInt64BE(4)),
    status: r.data[12]! & 0x0f,
    kad: r.data.length > 16 ? r.data.subarray(20, 20 + r.data.readUInt16BE(18)).toString() : '',
  };
}

const DATA_PROTECT = (ascq: number) => ({ key: 7, asc: 0x74, ascq });

describe('drive encryption (SECURITY PROTOCOL IN/OUT, tape data encryption)', () => {
  it('lists the protocols and the pages, and describes AES-256-GCM as IBM LTO drives do', async () => {
    const h = await loaded('ENC001L8');
    const protocols = await h.exec(DRIVE, spin(0, 0), { allocation: 8192 });
    ok(protocols);
    expect([...protocols.data.subarray(8, 8 + protocols.data.readUInt16BE(6))]).toEqual([0x00, 0x20]);
    const inPages = await h.exec(DRIVE, spin(0x20, 0x0000), { allocation: 8192 });
    const codes = [];
    for (let i = 4; i < 4 + inPages.data.readUInt16BE(2); i += 2) codes.push(inPages.data.readUInt16BE(i));
    expect(codes).toEqual([0x00, 0x01, 0x10, 0x11, 0x12, 0x20, 0x21]);
    const caps = await h.exec(DRIVE, spin(0x20, 0x0010), { allocation: 8192 });
    ok(caps);
    expect(caps.data.readUInt16BE(2)).toBe(40);
    expect(caps.data[20]).toBe(1); // algorithm index
    expect(caps.data[24]! & 0x80).toBe(0x80); // AVFMV: the LTO-8 cartridge takes it
    expect(caps.data[24]! & 0x0f).toBe(0x0a); // DECRYPT_C and ENCRYPT_C: hardware
    expect(caps.data.readUInt16BE(30)).toBe(32); // 256-bit key
    expect(caps.data.readUInt32BE(40)).toBe(0x00010014); // AES-256-GCM
    const mgmt = await h.exec(DRIVE, spin(0x20, 0x0012), { allocation: 8192 });
    expect([...mgmt.data.subarray(4, 8)]).toEqual([0x01, 0x07, 0x00, 0x07]);
    // Unknown page, unknown protocol, INC_512: INVALID FIELD IN CDB.
    expect((await h.exec(DRIVE, spin(0x20, 0x0030), { allocation: 8192 })).sense).toMatchObject({
      key: 5,
      asc: 0x24,
    });
    expect((await h.exec(DRIVE, spin(0x40, 0x0000), { allocation: 8192 })).sense).toMatchObject({
      key: 5,
      asc: 0x24,
    });
    const inc512 = spin(0x20, 0x0020);
    inc512[4] = 0x80;
    expect((await h.exec(DRIVE, inc512, { allocation: 8192 })).sense).toMatchObject({ key: 5, asc: 0x24 });
    const st = await status(h);
    expect(st).toMatchObject({ enc: 0, dec: 0, keyScope: 0, instance: 0, vcelb: false });
  });

  it('writes blocks encrypted, reads them only with the key, and mixes clear and encrypted blocks', async () => {
    const h = await loaded('ENC002L8');
    ok(await h.exec(DRIVE, Cdb.space6(3, 0))); // past the minted label: end of data
    ok(await h.exec(DRIVE, Cdb.write6(5), { dataOut: Buffer.from('clear') }));
    ok(await setEncryption(h, { enc: 2, dec: 3, key: KEY_A, ukad: 'key-2026' }));
    expect(await status(h)).toMatchObject({
      enc: 2,
      dec: 3,
      keyScope: 2,
      instance: 1,
      vcelb: false,
      kad: 'key-2026',
    });
    const secret = Buffer.from('the secret block of the archive');
    ok(await h.exec(DRIVE, Cdb.write6(secret.length), { dataOut: secret }));
    expect(await status(h)).toMatchObject({ vcelb: true });
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));

    // On the medium the block is not the host's bytes, nor is the key anywhere in the image.
    const dir = join(t.dp.library(1).config.media_dir, 'ENC002L8');
    for (const f of await readdir(dir)) {
      const bytes = await readFile(join(dir, f));
      expect(bytes.includes(secret), f).toBe(false);
      expect(bytes.includes(KEY_A), f).toBe(false);
    }
    expect(JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8'))).toMatchObject({
      encrypted_data: true,
    });

    // MIXED reads both; the next block status tells which is which and the key's label.
    ok(await h.exec(DRIVE, Cdb.rewind()));
    ok(await h.exec(DRIVE, Cdb.space6(1, 1)));
    expect(await nextBlock(h)).toMatchObject({ status: 3 });
    expect((await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 })).data.toString()).toBe('clear');
    expect(await nextBlock(h)).toMatchObject({ object: 3, status: 5, kad: 'key-2026' });
    const back = await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 });
    expect(back.sense).toMatchObject({ ili: true, information: 100 - secret.length });
    expect(back.data.toString()).toBe(secret.toString());

    // DECRYPT (not MIXED) refuses the clear block.
    ok(await setEncryption(h, { enc: 2, dec: 2, key: KEY_A }));
    ok(await h.exec(DRIVE, Cdb.space6(0, -2)));
    expect((await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 })).sense).toMatchObject(DATA_PROTECT(2));

    // Another key: INCORRECT DATA ENCRYPTION KEY; no decryption: UNABLE TO DECRYPT DATA.
    ok(await setEncryption(h, { enc: 0, dec: 3, key: KEY_B }));
    expect(await nextBlock(h)).toMatchObject({ object: 3, status: 6, kad: 'key-2026' });
    expect((await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 })).sense).toMatchObject(DATA_PROTECT(3));
    ok(await setEncryption(h, {}));
    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    expect((await h.exec(DRIVE, Cdb.read6(100), { allocation: 100 })).sense).toMatchObject(DATA_PROTECT(1));
    expect(await status(h)).toMatchObject({ enc: 0, dec: 0, keyScope: 0, vcelb: true });
  });

  it('refuses what the drive does not offer, with the field pointer, and changes nothing', async () => {
    const h = await loaded('ENC003L8');
    const refused = async (o: Sde, byte: number) => {
      const r = await setEncryption(h, o);
      expect(r.sense, JSON.stringify(o)).toMatchObject({ key: 5, asc: 0x26 });
      expect(r.sense?.fieldPointer?.byte).toBe(byte);
    };
    await refused({ enc: 1, dec: 3, key: KEY_A }, 6); // EXTERNAL
    await refused({ enc: 2, dec: 1, key: KEY_A }, 7); // RAW
    await refused({ enc: 2, dec: 3, key: KEY_A, algorithm: 2 }, 8);
    await refused({ enc: 2, dec: 3, key: KEY_A.subarray(0, 16) }, 18);
    await refused({ enc: 2, dec: 3 }, 18); // no key
    await refused({ scope: 3, enc: 2, dec: 3, key: KEY_A }, 4);
    await refused({ enc: 2, dec: 3, key: KEY_A, flags: 0x01 }, 5); // CKORL without a reservation
    await refused({ enc: 2, dec: 3, key: KEY_A, flags: 0x02 }, 5); // CKORP without a registration
    await refused({ enc: 0, dec: 3, key: KEY_A, ukad: 'label' }, 52); // KAD without encrypting
    expect(await status(h)).toMatchObject({ enc: 0, dec: 0, instance: 0 });
    // Turning encryption off with a zeroed key and CEEM set, as stenc does: accepted.
    ok(await setEncryption(h, { enc: 0, dec: 0, key: Buffer.alloc(32), flags: 0x40 }));
    expect(await status(h)).toMatchObject({ enc: 0, dec: 0, keyScope: 0 });
  });

  it('keeps LOCAL parameters to one nexus, locks shared ones, and clears on demount and nexus loss', async () => {
    const a = await loaded('ENC004L8');
    const b = await t.host('iqn.2026-01.test:other-host');
    await b.clearUnitAttentions(DRIVE);
    // A's LOCAL key is A's alone: B sees the defaults, with scope PUBLIC.
    ok(await setEncryption(a, { scope: 1, enc: 2, dec: 3, key: KEY_A }));
    expect(await status(a)).toMatchObject({ nexusScope: 1, keyScope: 1, enc: 2 });
    expect(await status(b)).toMatchObject({ nexusScope: 0, enc: 0 });
    // B shares a key with every nexus and locks itself to it; A's LOCAL set still wins for A.
    ok(await setEncryption(b, { scope: 2, lock: true, enc: 2, dec: 3, key: KEY_B }));
    expect(await status(a)).toMatchObject({ nexusScope: 1, enc: 2, instance: 2 });
    // A goes back to the public parameters: B's; and may not replace them while B is locked.
    ok(await setEncryption(a, { scope: 0 }));
    expect(await status(a)).toMatchObject({ nexusScope: 0, keyScope: 2, enc: 2 });
    expect((await setEncryption(a, { scope: 2, enc: 0, dec: 0 })).sense).toMatchObject(DATA_PROTECT(0x21));
    // B's nexus ends: its lock goes, and A may change the shared parameters again.
    await b.close();
    await expect
      .poll(async () => (await setEncryption(a, { scope: 2, enc: 0, dec: 0 })).status, { timeout: 10_000 })
      .toBe(0);
    // Clear on demount (CKOD): unloading the cartridge drops the key.
    ok(await setEncryption(a, { scope: 2, enc: 2, dec: 3, key: KEY_A, flags: 0x04 }));
    ok(await a.exec(DRIVE, Cdb.loadUnload(false)));
    expect(await status(a)).toMatchObject({ enc: 0, dec: 0, keyScope: 0 });
  });

  it('drops a key set with CKORL when its nexus releases the reservation', async () => {
    const h = await loaded('ENC005L8');
    ok(await h.exec(DRIVE, [0x16, 0, 0, 0, 0, 0])); // RESERVE(6)
    ok(await setEncryption(h, { enc: 2, dec: 3, key: KEY_A, flags: 0x01 }));
    expect(await status(h)).toMatchObject({ enc: 2 });
    ok(await h.exec(DRIVE, [0x17, 0, 0, 0, 0, 0])); // RELEASE(6)
    expect(await status(h)).toMatchObject({ enc: 0, keyScope: 0 });
  });
});
