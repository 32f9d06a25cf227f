import { describe, expect, it } from 'vitest';
import { kindName, subjectText } from './event-format';

describe('how the Events page words an event', () => {
  it('names known kinds and turns unknown ones into words', () => {
    expect(kindName('cart_minted')).toBe('Cartridge minted');
    expect(kindName('pool_stats')).toBe('Pool figures');
    expect(kindName('emu_tape_full')).toBe('Emu tape full');
  });

  it('puts library names into drive subjects', () => {
    const names = (id: number) => (id === 1 ? 'lib-a' : `#${id}`);
    expect(subjectText('drive:1:0', names)).toBe('lib-a drive 0');
    expect(subjectText('job:7', names)).toBe('job #7');
    expect(subjectText('A01L8', names)).toBe('A01L8');
  });
});
