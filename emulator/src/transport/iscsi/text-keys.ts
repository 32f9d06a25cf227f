/** One key=value pair of a login or text data segment, in the order received. */
export type KeyValue = readonly [key: string, value: string];

export class TextFormatError extends Error {
  readonly code = 'iscsi_text_format';
}

/**
 * Parses NUL-separated `key=value` pairs (RFC 7143 6.1). A trailing fragment without NUL is
 * returned separately so a C-bit continuation can prepend it to the next PDU's data.
 */
export function parseKeys(data: Buffer): { pairs: KeyValue[]; rest: Buffer } {
  const pairs: KeyValue[] = [];
  let start = 0;
  for (;;) {
    const end = data.indexOf(0, start);
    if (end < 0) break;
    if (end > start) {
      const text = data.toString('utf8', start, end);
      const eq = text.indexOf('=');
      if (eq <= 0) throw new TextFormatError(`malformed key: ${JSON.stringify(text.slice(0, 64))}`);
      pairs.push([text.slice(0, eq), text.slice(eq + 1)]);
    }
    start = end + 1;
  }
  return { pairs, rest: data.subarray(start) };
}

/** Serialises pairs as NUL-terminated `key=value` strings. */
export function serializeKeys(pairs: readonly KeyValue[]): Buffer {
  if (pairs.length === 0) return Buffer.alloc(0);
  return Buffer.from(pairs.map(([k, v]) => `${k}=${v}\0`).join(''), 'utf8');
}
