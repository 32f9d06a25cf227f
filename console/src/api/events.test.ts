import { describe, expect, it } from 'vitest';
import { parseFrames } from './events';

describe('the SSE frame parser', () => {
  it('reads id and data, skips comments, and keeps a partial frame for the next chunk', () => {
    const chunk =
      ': connected; resynchronise from GET /api/status\n\n' +
      'id: 41\nevent: cart_minted\ndata: {"ts":"t1","kind":"cart_minted","subject":"A01L8","data":{"detail":"slot 1"}}\n\n' +
      ': keepalive\n\n' +
      'id: 42\nevent: manual_load\ndata: {"ts":"t2","kind":"manual';
    const first = parseFrames(chunk);
    expect(first.frames).toEqual([
      { id: '41', ts: 't1', kind: 'cart_minted', subject: 'A01L8', data: { detail: 'slot 1' } },
    ]);
    const second = parseFrames(first.rest + '_load","subject":"A01L8","data":{}}\n\n');
    expect(second.frames.map((f) => [f.id, f.kind])).toEqual([['42', 'manual_load']]);
    expect(second.rest).toBe('');
  });

  it('skips a frame whose data is not JSON', () => {
    expect(parseFrames('id: 1\ndata: {oops\n\n').frames).toEqual([]);
  });
});
