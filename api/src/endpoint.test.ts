import { describe, expect, it } from 'vitest';
import { parseEndpoint } from './endpoint.js';
import { CreateRemoteRequest, UpdateRemoteRequest } from './resources/remote.js';
import { InitiatorSpec } from './resources/initiator.js';

describe('parseEndpoint', () => {
  it('accepts host, host:port, IP addresses and http(s) URLs', () => {
    expect(parseEndpoint('s3.amazonaws.com')).toEqual({ hostPort: 's3.amazonaws.com' });
    expect(parseEndpoint('10.0.0.5:9000')).toEqual({ hostPort: '10.0.0.5:9000' });
    expect(parseEndpoint('[::1]:9000')).toEqual({ hostPort: '[::1]:9000' });
    expect(parseEndpoint('localhost')).toEqual({ hostPort: 'localhost' });
    expect(parseEndpoint('minio:9000')).toEqual({ hostPort: 'minio:9000' });
    expect(parseEndpoint('https://s3.example.com')).toEqual({ hostPort: 's3.example.com', useSsl: true });
    expect(parseEndpoint('http://rgw.lan:7480/')).toEqual({ hostPort: 'rgw.lan:7480', useSsl: false });
  });

  it.each([
    '..',
    'NaN',
    '1',
    '1.2.3',
    '256.1.1.1',
    'a..b',
    '-a.com',
    'a.com:0',
    'a.com:65536',
    'a.com:x',
    'ftp://a.com',
    'https://a.com/p',
    'https://u:p@a.com',
    'a b.com',
    '',
    '[zz]',
  ])('refuses %j with a reason', (input) => {
    expect(typeof parseEndpoint(input)).toBe('string');
  });

  it('normalises a URL endpoint in the request schemas, its scheme setting use_ssl', () => {
    const body = { name: 'r', bucket: 'b', access_key: 'AK', secret_key: 'secret', use_ssl: true };
    expect(CreateRemoteRequest.parse({ ...body, endpoint: 'http://h.example:9000' })).toMatchObject({
      endpoint: 'h.example:9000',
      use_ssl: false,
    });
    expect(UpdateRemoteRequest.parse({ endpoint: 'https://h.example' })).toEqual({
      endpoint: 'h.example',
      use_ssl: true,
    });
    expect(UpdateRemoteRequest.safeParse({ endpoint: 'NaN' }).success).toBe(false);
  });
});

describe('display strings', () => {
  it.each(['a\u0000b', 'a\r\nb', 'a\tb', 'a\u007fb', 'a\u0085b', 'a\u009fb', '<x>', 'x'.repeat(65)])(
    'an alias %j is refused',
    (alias) => {
      expect(InitiatorSpec.safeParse({ wwpn: '10:00:00:00:c9:aa:bb:cc', alias }).success).toBe(false);
    },
  );
  it('keeps any other text, accents and dashes included', () => {
    expect(
      InitiatorSpec.parse({ wwpn: '10:00:00:00:c9:aa:bb:cc', alias: 'Sauvegarde — baie 2 (été)' }).alias,
    ).toBe('Sauvegarde — baie 2 (été)');
  });
});
