import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

/**
 * The self-signed certificate is made once, at the first start: its library (selfsigned and the
 * @peculiar ASN.1 packages, some 3 MB of heap) is loaded then, not by every apiserver (issue 13's
 * idle memory).
 */
describe('the apiserver loads the certificate generator only when it makes a certificate', () => {
  it('loading every built module but the entry script loads neither selfsigned nor @peculiar', async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), ['server.js']);
    expect(loaded.some((u) => u.includes('/apiserver/dist/tls.js'))).toBe(true);
    expect(loaded.filter((u) => /\/node_modules\/(selfsigned|@peculiar)\//.test(u))).toEqual([]);
  }, 90_000);
});
