import { describe, expect, it } from 'vitest';
import { redactUrl } from './request-log.js';
import { requestLineTooLong } from './client-errors.js';

describe('redactUrl', () => {
  it('replaces every query value and keeps the path and parameter names', () => {
    expect(redactUrl('/api/status?token=vtls_abc&x=1')).toBe('/api/status?token=[redacted]&x=[redacted]');
    expect(redactUrl('/api/status')).toBe('/api/status');
    expect(redactUrl('/api/status?vtls_secretvalue_that_is_long_enough_to_matter')).toBe(
      '/api/status?[redacted]',
    );
  });
});

describe('requestLineTooLong', () => {
  it('tells a long request line from a large header block', () => {
    expect(requestLineTooLong(`GET /x?q=${'a'.repeat(9000)}`)).toBe(true);
    expect(requestLineTooLong(`aaaa HTTP/1.1\r\nhost: x\r\n`)).toBe(true);
    expect(requestLineTooLong(`GET /api/status HTTP/1.1\r\nx-filler: ${'a'.repeat(20000)}`)).toBe(false);
    expect(requestLineTooLong(`aaaaaaaaaaaaaaaaaaaaaa`)).toBe(false);
  });
});
