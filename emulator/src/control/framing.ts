/** Longest line either side accepts; a status of 32 libraries × 400 cartridges fits easily. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Splits a byte stream into newline-terminated JSON lines. A line longer than the limit is a
 * broken or hostile peer: the reader reports it once and the caller drops the connection.
 */
export class LineReader {
  private pending = '';

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer | string): void {
    this.pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl).trim();
      this.pending = this.pending.slice(nl + 1);
      if (line) this.onLine(line);
    }
    if (this.pending.length > MAX_LINE_BYTES) {
      this.pending = '';
      this.onOverflow();
    }
  }
}

export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
