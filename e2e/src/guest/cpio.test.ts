import { describe, expect, it } from 'vitest';
import { cpioArchive } from './cpio.js';
import { parseResults } from './qemu-runner.js';

describe('the archive appended to the guest initramfs', () => {
  it('is a newc cpio with the file, its mode and a trailer, padded for concatenation', () => {
    const archive = cpioArchive([{ name: '/test.sh', data: 'echo hi\n', mode: 0o755 }]);
    expect(archive.length % 512).toBe(0);
    expect(archive.subarray(0, 6).toString()).toBe('070701');
    const field = (i: number) => Number.parseInt(archive.subarray(6 + i * 8, 14 + i * 8).toString(), 16);
    expect(field(1)).toBe(0o100755); // mode: regular file, rwxr-xr-x
    expect(field(6)).toBe(8); // file size
    expect(field(11)).toBe('test.sh\0'.length); // name size, leading slash dropped
    const name = archive.indexOf('test.sh\0');
    const data = archive.indexOf('echo hi\n');
    expect(name).toBe(110);
    expect(data % 4).toBe(0);
    expect(archive.indexOf('TRAILER!!!')).toBeGreaterThan(data);
  });
});

describe('the guest result lines', () => {
  it('parses steps out of console noise', () => {
    const console = [
      '[    1.0] kernel says hello',
      'RESULT login ok iqn.2026-11.io.vtl:node1\r',
      'LOG write tar output',
      'RESULT write fail tar failed: no space',
      'RESULT offline ok',
    ].join('\n');
    expect(parseResults(console)).toEqual([
      { step: 'login', ok: true, detail: 'iqn.2026-11.io.vtl:node1' },
      { step: 'write', ok: false, detail: 'tar failed: no space' },
      { step: 'offline', ok: true, detail: '' },
    ]);
  });
});
