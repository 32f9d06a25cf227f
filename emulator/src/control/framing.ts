/** Longest line either side accepts; a status of 32 libraries × 400 cartridges fits easily. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Splits a byte stream into newline-terminated JSON lines. A line longer than the limit is a
 * broken or hostile peer: the reader reports it once and the caller drops the connection.
 *
 * The bytes of an unfinished line are kept as the chunks they came in and decoded once, when
 * its newline arrives: appending each chunk to a string and searching it again made V8 flatten
 * the whole string so far per chunk (a 1 MB status line in 64 KB chunks: some 8 MB of copies,
 * most of them large objects that stay until the next full collection), and decoding chunk by
 * chunk would split a multi-byte character that straddles two chunks.
 */
export class LineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer | string): void {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let nl: number;
    while ((nl = rest.indexOf(0x0a)) >= 0) {
      const tail = rest.subarray(0, nl);
      const bytes = this.pending.length > 0 ? Buffer.concat([...this.pending, tail]) : tail;
      this.pending = [];
      this.pendingBytes = 0;
      rest = rest.subarray(nl + 1);
      const line = bytes.toString('utf8').trim();
      if (line) this.onLine(line);
    }
    if (rest.length > 0) {
      this.pending.push(rest);
      this.pendingBytes += rest.length;
    }
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onOverflow();
    }
  }
}

export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
