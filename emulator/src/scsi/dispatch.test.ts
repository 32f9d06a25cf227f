import { describe, expect, it } from 'vitest';
import { OpcodeTable } from './dispatch.js';
import { good } from './result.js';

const noop = () => good();

describe('OpcodeTable', () => {
  it('resolves plain opcodes and service actions, defaulting to invalid opcode', () => {
    const table = new OpcodeTable()
      .set(0x00, { name: 'TUR', handler: noop })
      .setServiceAction(0xa3, 0x0c, { name: 'RSOC', handler: noop });
    expect(table.resolve(Buffer.from([0x00, 0, 0, 0, 0, 0]))).toMatchObject({
      kind: 'found',
      entry: { name: 'TUR' },
    });
    expect(table.resolve(Buffer.from([0xa3, 0x0c]))).toMatchObject({ kind: 'found', serviceAction: 0x0c });
    expect(table.resolve(Buffer.from([0xa3, 0x05])).kind).toBe('invalid-service-action');
    expect(table.resolve(Buffer.from([0x99])).kind).toBe('invalid-opcode');
  });

  it('lets a personality override a copy without touching the base', () => {
    const base = new OpcodeTable().set(0x12, { name: 'INQUIRY', handler: noop });
    const personality = base
      .clone()
      .set(0x12, { name: 'IBM INQUIRY', handler: noop })
      .set(0xc0, { name: 'VENDOR', handler: noop, cdbLength: 6 });
    expect(base.lookup(0x12)?.name).toBe('INQUIRY');
    expect(personality.lookup(0x12)?.name).toBe('IBM INQUIRY');
    expect(personality.list().map((r) => [r.opcode, r.cdbLength])).toEqual([
      [0x12, 6],
      [0xc0, 6],
    ]);
    expect(base.list()).toHaveLength(1);
  });
});
