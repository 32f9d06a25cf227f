import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { VtlError } from '@vtl/api';
import { OffsiteError, listObjects } from '@vtl/offsite';
import { remoteFailure } from './remote-errors.js';

const conn = (endpoint: string) => ({
  endpoint,
  region: '',
  bucket: 'b',
  prefix: '',
  access_key: 'k',
  secret_key: 's',
  use_ssl: false,
  path_style: true,
});

describe('S3 failures as API answers', () => {
  it('a closed port is 502 remote_refused naming the endpoint', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const err = await listObjects(conn(`127.0.0.1:${port}`)).catch((e: unknown) => e);
    const answer = remoteFailure(err, 'Listing the remote', `http://127.0.0.1:${port}`) as VtlError;
    expect(answer).toBeInstanceOf(VtlError);
    expect(answer.status).toBe(502);
    expect(answer.code).toBe('remote_refused');
    expect(answer.message).toContain(`http://127.0.0.1:${port}`);
    expect(answer.details).toEqual({ endpoint: `http://127.0.0.1:${port}` });
  }, 30_000);

  it('a timeout anywhere in the cause chain is 504 remote_unreachable', () => {
    const cause = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    const err = new OffsiteError('unreachable', 'listing / failed: unreachable', { cause });
    const answer = remoteFailure(err, 'Listing the remote', 'http://10.0.0.1:9000') as VtlError;
    expect(answer.code).toBe('remote_unreachable');
    expect(answer.status).toBe(504);
  });

  it('refused credentials are 502; bad input is 400; other errors pass through', () => {
    const denied = remoteFailure(new OffsiteError('access_denied', 'denied'), 'x', 'http://h') as VtlError;
    expect(denied.code).toBe('remote_refused');
    const invalid = remoteFailure(new OffsiteError('invalid', 'not a folder'), 'x', 'http://h') as VtlError;
    expect(invalid.code).toBe('bad_request');
    const bug = new TypeError('undefined is not a function');
    expect(remoteFailure(bug, 'x', 'http://h')).toBe(bug);
  });
});
