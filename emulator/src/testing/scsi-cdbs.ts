/** CDB builders for device tests: what a host's st, sg, ch or mtx would send. */

const u24 = (n: number) => [(n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const u16 = (n: number) => [(n >>> 8) & 0xff, n & 0xff];
const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
function u64(n: number | bigint): number[] {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return [...b];
}

export const Cdb = {
  tur: () => [0x00, 0, 0, 0, 0, 0],
  requestSense: (alloc = 252) => [0x03, 0, 0, 0, alloc, 0],
  inquiry: (alloc = 255, page?: number) => [0x12, page === undefined ? 0 : 1, page ?? 0, ...u16(alloc), 0],
  rewind: () => [0x01, 0, 0, 0, 0, 0],
  readBlockLimits: () => [0x05, 0, 0, 0, 0, 0],
  read6: (length: number, opts: { fixed?: boolean; sili?: boolean } = {}) => [
    0x08,
    (opts.fixed ? 1 : 0) | (opts.sili ? 2 : 0),
    ...u24(length),
    0,
  ],
  write6: (length: number, opts: { fixed?: boolean } = {}) => [0x0a, opts.fixed ? 1 : 0, ...u24(length), 0],
  writeFilemarks: (n: number) => [0x10, 0, ...u24(n), 0],
  /** code 0 blocks, 1 filemarks, 3 end of data; count is signed. */
  space6: (code: number, count: number) => [0x11, code, ...u24(count & 0xffffff), 0],
  space16: (code: number, count: number) => [0x91, code, 0, 0, ...u64(count), 0, 0, 0, 0],
  erase: (long = true) => [0x19, long ? 1 : 0, 0, 0, 0, 0],
  loadUnload: (load: boolean) => [0x1b, 0, 0, 0, load ? 1 : 0, 0],
  preventAllow: (prevent: boolean) => [0x1e, 0, 0, 0, prevent ? 1 : 0, 0],
  locate10: (object: number) => [0x2b, 0, 0, ...u32(object), 0, 0, 0],
  /** destType 0 object, 1 file, 3 end of data. */
  locate16: (id: number, destType = 0) => [0x92, destType << 3, 0, 0, ...u64(id), 0, 0, 0, 0],
  readPosition: (form = 0, alloc = 0) => [0x34, form, 0, 0, 0, 0, 0, ...u16(alloc), 0],
  reportDensity: (opts: { media?: boolean; mediumType?: boolean } = {}, alloc = 4096) => [
    0x44,
    (opts.media ? 1 : 0) | (opts.mediumType ? 2 : 0),
    0,
    0,
    0,
    0,
    0,
    ...u16(alloc),
    0,
  ],
  modeSense6: (page: number, opts: { pc?: number; dbd?: boolean; alloc?: number } = {}) => [
    0x1a,
    opts.dbd ? 0x08 : 0,
    ((opts.pc ?? 0) << 6) | page,
    0,
    opts.alloc ?? 255,
    0,
  ],
  modeSense10: (page: number, alloc = 1024) => [0x5a, 0, page, 0, 0, 0, 0, ...u16(alloc), 0],
  modeSelect6: (length: number) => [0x15, 0x10, 0, 0, length, 0],
  modeSelect10: (length: number) => [0x55, 0x10, 0, 0, 0, 0, 0, ...u16(length), 0],
  logSense: (page: number, alloc = 4096) => [0x4d, 0, 0x40 | page, 0, 0, 0, 0, ...u16(alloc), 0],
  logSelectReset: () => [0x4c, 0x02, 0xc0, 0, 0, 0, 0, 0, 0, 0],
  readAttribute: (action: number, first = 0, alloc = 8192, partition = 0) => [
    0x8c,
    action,
    0,
    0,
    0,
    0,
    0,
    partition,
    ...u16(first),
    ...u32(alloc),
    0,
    0,
  ],
  writeAttribute: (length: number, partition = 0) => [
    0x8d,
    1,
    0,
    0,
    0,
    0,
    0,
    partition,
    0,
    0,
    ...u32(length),
    0,
    0,
  ],
  formatMedium: (format: number) => [0x04, 0, format, 0, 0, 0],
  reportLuns: (alloc = 1024) => [0xa0, 0, 0, 0, 0, 0, ...u32(alloc), 0, 0],
  reportSupportedOpcodes: (alloc = 8192) => [0xa3, 0x0c, 0, 0, 0, 0, ...u32(alloc), 0, 0],
  reserve6: () => [0x16, 0, 0, 0, 0, 0],
  persistentReserveIn: (action: number, alloc = 1024) => [0x5e, action, 0, 0, 0, 0, 0, ...u16(alloc), 0],
  /** PERSISTENT RESERVE OUT with the basic 24-byte parameter list (`Cdb.prOutParameters`). */
  persistentReserveOut: (action: number, type = 0, length = 24) => [
    0x5f,
    action,
    type,
    0,
    0,
    ...u32(length),
    0,
  ],
  prOutParameters: (key: bigint, serviceActionKey = 0n, flags = 0) => {
    const b = Buffer.alloc(24);
    b.writeBigUInt64BE(key, 0);
    b.writeBigUInt64BE(serviceActionKey, 8);
    b[20] = flags;
    return b;
  },
  release6: () => [0x17, 0, 0, 0, 0, 0],
  readElementStatus: (
    type: number,
    start: number,
    count: number,
    opts: { voltag?: boolean; dvcid?: boolean; alloc?: number } = {},
  ) => [
    0xb8,
    (opts.voltag ? 0x10 : 0) | type,
    ...u16(start),
    ...u16(count),
    opts.dvcid ? 1 : 0,
    ...u24(opts.alloc ?? 0xffff),
    0,
    0,
  ],
  moveMedium: (source: number, destination: number, transport = 0) => [
    0xa5,
    0,
    ...u16(transport),
    ...u16(source),
    ...u16(destination),
    0,
    0,
    0,
    0,
  ],
  initializeElementStatus: () => [0x07, 0, 0, 0, 0, 0],
  initializeElementStatusWithRange: (start: number, count: number) => [
    0x37,
    1,
    ...u16(start),
    0,
    0,
    ...u16(count),
    0,
    0,
  ],
} as const;

/** A MODE SELECT(6) parameter list: header, one block descriptor, then pages. */
export function modeSelect6Data(blockLength: number | undefined, pages: Buffer[] = []): Buffer {
  const bd = blockLength === undefined ? [] : [0, 0, 0, 0, 0, ...u24(blockLength)];
  return Buffer.concat([Buffer.from([0, 0, 0x10, bd.length, ...bd]), ...pages]);
}

/** A WRITE ATTRIBUTE parameter list of (id, format, value) triples. */
export function attributeList(attrs: Array<[id: number, format: number, value: Buffer]>): Buffer {
  const body = Buffer.concat(
    attrs.map(([id, format, value]) =>
      Buffer.concat([Buffer.from([...u16(id), format, ...u16(value.length)]), value]),
    ),
  );
  return Buffer.concat([Buffer.from(u32(body.length)), body]);
}

/** The value of attribute `id` in READ ATTRIBUTE (VALUES) data, if it is there. */
export function attributeValue(data: Buffer, id: number): Buffer | undefined {
  for (let at = 4; at < 4 + data.readUInt32BE(0);) {
    const length = data.readUInt16BE(at + 3);
    if (data.readUInt16BE(at) === id) return data.subarray(at + 5, at + 5 + length);
    at += 5 + length;
  }
  return undefined;
}
