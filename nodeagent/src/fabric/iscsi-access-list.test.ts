import { describe, expect, it } from 'vitest';
import type { InitiatorRecord } from '@vtl/api';
import { iscsiAccessList } from './iscsi-access-list.js';

const record = (wwpn: string, extra: Partial<InitiatorRecord> = {}): InitiatorRecord => ({
  wwpn,
  alias: '',
  fabric: 'iscsi',
  ports: '',
  libraries: '',
  created_at: '2026-11-25T00:00:00Z',
  ...extra,
});

describe('the iSCSI registry pushed to the emulator', () => {
  it('joins CHAP usernames and secrets, and leaves out FC initiators', () => {
    const { access, problems } = iscsiAccessList(
      [
        record('iqn.2026-11.a:plain', { libraries: '2' }),
        record('iqn.2026-11.a:oneway', { chap: { username: 'one', mutual_username: '' } }),
        record('iqn.2026-11.a:mutual', { chap: { username: 'two', mutual_username: 'vtl' } }),
        record('naa.21000024ff000001', { fabric: 'fc' }),
      ],
      new Map([
        [
          'iqn.2026-11.a:oneway',
          { username: 'one', secret: 'OneWaySecret12', mutual_username: '', mutual_secret: '' },
        ],
        [
          'iqn.2026-11.a:mutual',
          {
            username: 'two',
            secret: 'MutualSecret12',
            mutual_username: 'vtl',
            mutual_secret: 'TargetSecret12',
          },
        ],
      ]),
      [1, 2],
    );
    expect(problems).toEqual([]);
    expect(access).toEqual([
      { name: 'iqn.2026-11.a:plain', libraries: [2] },
      {
        name: 'iqn.2026-11.a:oneway',
        libraries: [1, 2],
        chap: { username: 'one', secret: 'OneWaySecret12' },
      },
      {
        name: 'iqn.2026-11.a:mutual',
        libraries: [1, 2],
        chap: {
          username: 'two',
          secret: 'MutualSecret12',
          mutual_username: 'vtl',
          mutual_secret: 'TargetSecret12',
        },
      },
    ]);
  });

  it('takes the secret record whole when the registry record read before it is older', () => {
    // CHAP switched on between the two reads: the record does not show it yet, the secrets do.
    const { access } = iscsiAccessList(
      [record('iqn.2026-11.a:new')],
      new Map([
        [
          'iqn.2026-11.a:new',
          { username: 'n', secret: 'NewSecret1234', mutual_username: '', mutual_secret: '' },
        ],
      ]),
      [],
    );
    expect(access).toEqual([
      { name: 'iqn.2026-11.a:new', libraries: [], chap: { username: 'n', secret: 'NewSecret1234' } },
    ]);
  });

  it('refuses (leaves out) an initiator whose CHAP secret is missing, and says so', () => {
    const { access, problems } = iscsiAccessList(
      [record('iqn.2026-11.a:lost', { chap: { username: 'x', mutual_username: '' } })],
      new Map(),
      [1],
    );
    expect(access).toEqual([]);
    expect(problems).toEqual([expect.stringMatching(/iqn.2026-11.a:lost has CHAP set but no secret.*PUT/)]);
  });
});
