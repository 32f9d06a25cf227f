import { describe, expect, it } from 'vitest';
import { parsePrometheus } from './prometheus.js';

describe('the strict Prometheus text parser', () => {
  it('reads families, types, labels with escapes and special values', () => {
    const families = parsePrometheus(
      [
        '# HELP a_bytes Help text',
        '# TYPE a_bytes gauge',
        'a_bytes{pool="p\\"1\\\\x",node="n"} 12',
        'a_bytes{pool="p2",node="n"} +Inf',
        '# TYPE b_total counter',
        'b_total 3.5e2 1700000000000',
        '# TYPE c_seconds gauge',
        'c_seconds{q="a"} Nan',
        'c_seconds{q="b"} NaN',
        'c_seconds{q="c"} -inf',
        '',
      ].join('\n'),
    );
    expect(families.get('a_bytes')?.type).toBe('gauge');
    expect(families.get('a_bytes')?.samples[0]).toEqual({
      name: 'a_bytes',
      labels: { pool: 'p"1\\x', node: 'n' },
      value: 12,
    });
    expect(families.get('a_bytes')?.samples[1]?.value).toBe(Infinity);
    expect(families.get('b_total')?.samples[0]?.value).toBe(350);
    // prom-client writes NaN as `Nan`; Prometheus reads any case.
    expect(families.get('c_seconds')?.samples.map((s) => s.value)).toEqual([NaN, NaN, -Infinity]);
  });

  it.each([
    ['no trailing newline', 'a 1'],
    ['bad value', 'a one\n'],
    ['unquoted label', 'a{x=1} 1\n'],
    ['duplicate series', 'a{x="1"} 1\na{x="1"} 2\n'],
    ['bad type', '# TYPE a thing\n'],
    ['split family', 'a 1\nb 1\na{x="2"} 1\n'],
    ['bad name', '1a 1\n'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePrometheus(text)).toThrow();
  });
});
