import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { LicenseRecord, isoNow, keys, type License } from '@vtl/api';
import type { Store } from '@vtl/store';
import { ensureIdentity } from './identity.js';

const PREFIX = 'VTL';
/** Crockford base32: no I, L, O, U, so a fingerprint read over the phone is unambiguous. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The machine's durable identity: the first readable of the configured files (the OS machine id
 * changes on reinstall, the DMI product UUID with the hardware). Without any, the appliance's
 * own UUID from etcd stands in, which at least tells appliances apart.
 */
async function machineIdentity(files: string[], store: Store): Promise<string> {
  for (const file of files) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    if (text.trim()) return `file:${text.trim().toLowerCase()}`;
  }
  return `uuid:${(await ensureIdentity(store)).system_uuid}`;
}

/** `VTL-XXXXX-XXXXX-XXXXX-XXXXX` from a hash of the identity; nothing is ever uploaded. */
export function fingerprintOf(identity: string): string {
  const digest = createHash('sha256').update(`vtl-support-fingerprint\0${identity}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 13)) bits = (bits << 8n) | BigInt(byte);
  let chars = '';
  for (let i = 0; i < 20; i++) chars += ALPHABET[Number((bits >> BigInt(5 * i)) & 31n)];
  return [PREFIX, ...(chars.match(/.{5}/g) as string[])].join('-');
}

/**
 * §2.12. The first fingerprint seen is recorded as acknowledged, so a later OS reinstall or
 * hardware transfer shows `changed` even if nobody ever acknowledged one.
 */
export async function licenseView(store: Store, files: string[]): Promise<License> {
  const fingerprint = fingerprintOf(await machineIdentity(files, store));
  const created = await store.create(keys.license, { acknowledged: fingerprint, acknowledged_at: isoNow() });
  const acked = created?.value ?? (await store.get(keys.license, LicenseRecord))?.value;
  const changed = acked !== undefined && acked.acknowledged !== fingerprint;
  return { fingerprint, changed, previous: changed && acked ? acked.acknowledged : '' };
}

export async function acknowledgeLicense(store: Store, files: string[]): Promise<string> {
  const fingerprint = fingerprintOf(await machineIdentity(files, store));
  await store.put(keys.license, { acknowledged: fingerprint, acknowledged_at: isoNow() });
  return fingerprint;
}
