import { describe, expect, it } from 'vitest';
import { VtlError } from '@vtl/api';
import { isStoreBlip } from './store-blip.js';

const storeDown = () =>
  new VtlError('unavailable', 'The store (etcd) did not answer within 5000 ms.', {
    retry_after_sec: 5,
    down: ['store'],
  });

describe('isStoreBlip', () => {
  it("is the store's own deadline error, also as the cause of another error", () => {
    expect(isStoreBlip(storeDown())).toBe(true);
    expect(isStoreBlip(new Error('ledger write failed', { cause: storeDown() }))).toBe(true);
  });

  it('is not any other failure: those still fail the job with their reason', () => {
    expect(isStoreBlip(new VtlError('unavailable', 'S3 is down', { down: ['s3'] }))).toBe(false);
    expect(isStoreBlip(new VtlError('internal', 'boom'))).toBe(false);
    expect(isStoreBlip(new Error('ECONNREFUSED'))).toBe(false);
    expect(isStoreBlip(undefined)).toBe(false);
  });
});
