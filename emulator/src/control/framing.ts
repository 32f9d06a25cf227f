/** Longest line either side accepts; a status of 32 libraries × 400 cartridges fits easily. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Splits a byte stream into newline-terminated JSON lines. A line longer than the limit is a
 * broken or hostile peer: the reader reports it once and the caller drops the connection.
 *
 * Linear in the bytes received: only each new chunk is searched for the newline, and a line's
 * chunks are joined and decoded once when it ends (a status of 16 full libraries is a 1.3 MB
 * line, polled every second; searching and flattening the whole pending text on every 64 KB
 * chunk made the nodeagent's reading of it its biggest idle cost). Decoding whole lines also
 * keeps a multi-byte character split across two chunks intact.
 */
export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer | string): void {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let nl: number;
    while ((nl = rest.indexOf(NEWLINE)) >= 0) {
      const tail = rest.subarray(0, nl);
      const bytes = this.chunks.length > 0 ? Buffer.concat([...this.chunks, tail]) : tail;
      this.chunks = [];
      this.size = 0;
      rest = rest.subarray(nl + 1);
      const line = bytes.toString('utf8').trim();
      if (line) this.onLine(line);
    }
    if (rest.length === 0) return;
    this.chunks.push(rest);
    this.size += rest.length;
    if (this.size > MAX_LINE_BYTES) {
      this.chunks = [];
      this.size = 0;
      this.onOverflow();
    }
  }
}

const NEWLINE = 0x0a;

export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
