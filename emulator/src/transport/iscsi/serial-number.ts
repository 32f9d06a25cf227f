/**
 * 32-bit serial number arithmetic (RFC 1982), as CmdSN, StatSN and DataSN wrap.
 * lessThan(a, b) is true when b is "after" a by less than 2^31.
 */
export function snLessThan(a: number, b: number): boolean {
  return a !== b && (b - a) >>> 0 < 0x80000000;
}

export function snLessOrEqual(a: number, b: number): boolean {
  return a === b || snLessThan(a, b);
}

export function snAdd(a: number, n: number): number {
  return (a + n) >>> 0;
}
