import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { asJsonLine, relayLines } from './log-relay.js';

const sink = () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
};

describe('the log relay', () => {
  it('keeps JSON lines and wraps anything else into a JSON line naming the process', () => {
    const json = '{"level":30,"name":"apiserver","msg":"listening"}';
    expect(asJsonLine(json, 'apiserver', false)).toBe(json);
    expect(JSON.parse(asJsonLine('(node:12) Warning: something', 'controller', true, 5))).toEqual({
      level: 40,
      time: 5,
      name: 'controller',
      msg: '(node:12) Warning: something',
    });
    expect(JSON.parse(asJsonLine('{not json}', 'nodeagent', false, 5))).toMatchObject({
      level: 30,
      msg: '{not json}',
    });
  });

  it('copies whole lines of both streams to the file and the stream, skipping blank ones', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const file = sink();
    const out = sink();
    relayLines('test', { stdout, stderr }, { file: file.stream, out: out.stream });
    stdout.write('{"msg":"a"');
    stdout.write('}\n\n');
    stderr.end('boom\n');
    stdout.end();
    await new Promise((r) => setTimeout(r, 20));
    expect(out.lines).toEqual(file.lines);
    expect(out.lines.map((l) => JSON.parse(l).msg).sort()).toEqual(['a', 'boom']);
  });
});
