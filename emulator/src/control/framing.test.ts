import { describe, expect, it } from 'vitest';
import { LineReader, MAX_LINE_BYTES } from './framing.js';

const reader = () => {
  const lines: string[] = [];
  let overflows = 0;
  const r = new LineReader(
    (l) => lines.push(l),
    () => overflows++,
  );
  return { r, lines, overflows: () => overflows };
};

describe('the control socket line reader', () => {
  it('splits lines across and within chunks, skipping blank ones', () => {
    const { r, lines } = reader();
    r.push(Buffer.from('{"a":1}\n{"b"'));
    r.push(Buffer.from(':2}\n\n  \n{"c":3}'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    r.push('\n');
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps a multi-byte character split between two chunks', () => {
    const { r, lines } = reader();
    const bytes = Buffer.from('{"label":"É"}\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of É
    r.push(bytes.subarray(0, cut));
    r.push(bytes.subarray(cut));
    expect(lines).toEqual(['{"label":"É"}']);
  });

  it('reads a long line arriving in many small chunks as one line', () => {
    const { r, lines } = reader();
    const line = JSON.stringify({ cartridges: Array.from({ length: 5000 }, (_, i) => `L${i}`) });
    const bytes = Buffer.from(`${line}\n`);
    for (let i = 0; i < bytes.length; i += 1000) r.push(bytes.subarray(i, i + 1000));
    expect(lines).toEqual([line]);
  });

  it('reports a line past the limit once and starts over', () => {
    const { r, lines, overflows } = reader();
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let sent = 0; sent <= MAX_LINE_BYTES; sent += chunk.length) r.push(chunk);
    expect(overflows()).toBe(1);
    r.push('{"ok":true}\n');
    expect(lines).toEqual(['{"ok":true}']);
  });
});
