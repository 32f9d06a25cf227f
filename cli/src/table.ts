/** A table column: its header and how to read a row's cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => unknown;
  /** Shown only with `-o wide`. */
  wide?: boolean;
}

/** `kubectl get`'s age: the largest unit that fits (45s, 12m, 3h, 5d, 2y). */
export function age(timestamp: unknown, now = Date.now()): string {
  const t = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`;
  if (s < 2 * 86400) return `${Math.floor(s / 3600)}h`;
  if (s < 730 * 86400) return `${Math.floor(s / 86400)}d`;
  return `${Math.floor(s / (365 * 86400))}y`;
}

const text = (v: unknown) => (v === null || v === undefined || v === '' ? '<none>' : String(v));

/** Left-aligned columns separated by three spaces, like kubectl's tables. */
export function renderTable<T>(rows: T[], columns: Column<T>[], wide: boolean): string {
  const shown = columns.filter((c) => wide || !c.wide);
  const cells = [shown.map((c) => c.header), ...rows.map((r) => shown.map((c) => text(c.cell(r))))];
  const widths = shown.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map((line) =>
      line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join('   '),
    )
    .join('\n')
    .concat('\n');
}
