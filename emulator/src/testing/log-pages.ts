/** Decoders of the drive's LOG SENSE answers, for device tests. */

/** The TapeAlert flags that are set in page 2Eh (5-byte parameters). */
export function setTapeAlertFlags(page: Buffer): number[] {
  const set: number[] = [];
  for (let at = 4; at < 4 + page.readUInt16BE(2); at += 5)
    if (page[at + 4] === 1) set.push(page.readUInt16BE(at));
  return set;
}

/** Parameter code → value of a page whose parameters are unsigned counters. */
function counters(page: Buffer): Map<number, number> {
  const out = new Map<number, number>();
  for (let at = 4; at < 4 + page.readUInt16BE(2); at += 4 + page[at + 3]!)
    out.set(
      page.readUInt16BE(at),
      Number(page.subarray(at + 4, at + 4 + page[at + 3]!).reduce((n, b) => n * 256n + BigInt(b), 0n)),
    );
  return out;
}

/** Write (02h) or read (03h) error counters: the corrected ones, bytes moved, uncorrected errors. */
export function errorCounters(result: { data: Buffer }): {
  corrected: number[];
  bytes: number;
  uncorrected: number;
} {
  const c = counters(result.data);
  return {
    corrected: [0, 1, 2, 3, 4].map((k) => c.get(k) ?? -1),
    bytes: c.get(5) ?? -1,
    uncorrected: c.get(6) ?? -1,
  };
}
