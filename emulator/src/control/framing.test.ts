import { describe, expect, it } from 'vitest';
import { LineReader, MAX_LINE_BYTES, encodeLine } from './framing.js';

function reader() {
  const lines: string[] = [];
  let overflows = 0;
  const r = new LineReader(
    (line) => lines.push(line),
    () => overflows++,
  );
  return { r, lines, overflows: () => overflows };
}

describe('LineReader', () => {
  it('joins a line that arrives in many chunks and splits chunks holding several lines', () => {
    const { r, lines } = reader();
    const big = encodeLine({ libraries: Array.from({ length: 5_000 }, (_, i) => ({ label: `L${i}` })) });
    const bytes = Buffer.from(encodeLine({ a: 1 }) + big + encodeLine({ b: 2 }) + '{"c":');
    for (let i = 0; i < bytes.length; i += 4096) r.push(bytes.subarray(i, i + 4096));
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ a: 1 }, JSON.parse(big), { b: 2 }]);
    r.push('3}\n\n  \n');
    expect(lines.at(-1)).toBe('{"c":3}');
    expect(lines).toHaveLength(4);
  });

  it('keeps a multi-byte character split between two chunks whole', () => {
    const { r, lines } = reader();
    const bytes = Buffer.from(encodeLine({ detail: 'bande née à Zürich — ✓' }));
    const cut = bytes.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
    r.push(bytes.subarray(0, cut));
    r.push(bytes.subarray(cut));
    expect(JSON.parse(lines[0]!)).toEqual({ detail: 'bande née à Zürich — ✓' });
  });

  it('reports a line over the limit once and starts afresh', () => {
    const { r, lines, overflows } = reader();
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i <= MAX_LINE_BYTES / chunk.length; i++) r.push(chunk);
    expect(overflows()).toBe(1);
    r.push('{"ok":true}\n');
    expect(lines).toEqual(['{"ok":true}']);
  });
});
