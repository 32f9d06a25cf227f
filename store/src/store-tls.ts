import fs from 'node:fs/promises';
import { VtlError } from '@vtl/api/base';
import type { StoreTls } from './store-settings.js';

/** The etcd3 client's credentials, read from the files; a missing file names its setting. */
export async function credentials(
  tls: StoreTls,
): Promise<{ rootCertificate: Buffer; certChain: Buffer; privateKey: Buffer }> {
  const read = async (file: string, setting: string) => {
    try {
      return await fs.readFile(file);
    } catch (err) {
      throw new VtlError(
        'unavailable',
        `Cannot read ${setting}=${file} (${(err as NodeJS.ErrnoException).code}): the store needs it to connect. Point ${setting} at the file, or run as the user that owns it.`,
      );
    }
  };
  const [rootCertificate, certChain, privateKey] = await Promise.all([
    read(tls.caFile, 'VTL_ETCD_CA_FILE'),
    read(tls.certFile, 'VTL_ETCD_CERT_FILE'),
    read(tls.keyFile, 'VTL_ETCD_KEY_FILE'),
  ]);
  return { rootCertificate, certChain, privateKey };
}
