/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const UNITS: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };

/** Parses "2G", "256M", "256K" or a byte count (binary units). */
export function parseSize(text: string): number {
  const m = /^(\d+)\s*([kmg]?)(?:i?b)?$/i.exec(text.trim());
  if (!m) throw new Error(`${text} is not a size (use e.g. 2G, 256M, 1048576)`);
  return Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
}

/** "256 KiB", "1 MiB", "2 GiB". */
export function formatSize(bytes: number): string {
  for (const [unit, scale] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= scale && bytes % scale === 0) return `${bytes / scale} ${unit}`;
  }
  return `${bytes} B`;
}

/** Throughput in MiB/s. */
export function mibPerSecond(bytes: number, seconds: number): number {
  return bytes / 2 ** 20 / seconds;
}
