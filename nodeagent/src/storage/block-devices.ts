import fs from 'node:fs/promises';
import path from 'node:path';
import { badRequest } from '@vtl/api';
import { STORAGE_LABEL, probe } from './btrfs.js';

/** Below this a device is refused: btrfs needs room for its chunks, and a pool for some cartridges. */
export const MIN_DEVICE_BYTES = 1024 ** 3;

/** What a device is, as far as shared storage cares. */
export interface DeviceFacts {
  path: string;
  /** The kernel's name of it (/dev/loop3 for a symlink to it). */
  real: string;
  sizeBytes: number;
  /** The filesystem signature on it, if any (TYPE, LABEL, UUID). */
  signature: Record<string, string> | undefined;
}

async function readText(file: string): Promise<string> {
  return (await fs.readFile(file, 'utf8')).trim();
}

/** Every mounted source and swap device, by their real paths. */
async function devicesInUse(): Promise<Set<string>> {
  const used = new Set<string>();
  const mountinfo = await readText('/proc/self/mountinfo').catch(() => '');
  for (const line of mountinfo.split('\n')) {
    const source = line.split(' - ')[1]?.split(' ')[1];
    if (source?.startsWith('/dev/')) used.add(await fs.realpath(source).catch(() => source));
  }
  const swaps = await readText('/proc/swaps').catch(() => '');
  for (const line of swaps.split('\n').slice(1)) {
    const dev = line.split(/\s+/)[0];
    if (dev?.startsWith('/dev/')) used.add(await fs.realpath(dev).catch(() => dev));
  }
  return used;
}

/** Facts of one device, or the 400 saying why it cannot be one (missing, not a block device). */
export async function deviceFacts(device: string): Promise<DeviceFacts> {
  const real = await fs.realpath(device).catch(() => undefined);
  const st = real ? await fs.stat(real).catch(() => undefined) : undefined;
  if (!real || !st) throw badRequest(`Device ${device} does not exist on this node.`, { device });
  if (!st.isBlockDevice()) throw badRequest(`${device} is not a block device.`, { device });
  const name = path.basename(real);
  const sectors = Number(await readText(`/sys/class/block/${name}/size`).catch(() => '0'));
  return { path: device, real, sizeBytes: sectors * 512, signature: await probe(real) };
}

/** Whether the device carries a filesystem this appliance made (found again after a restart). */
export const isOurs = (f: DeviceFacts) =>
  f.signature?.TYPE === 'btrfs' && f.signature.LABEL === STORAGE_LABEL;

/**
 * The refusals of docs/storage.md for a device about to be formatted or added: missing, not a
 * block device, mounted (or swap, or held by another driver), too small, or holding a
 * filesystem (unless `force`). Each is a 400 naming the device; nothing is changed.
 */
export async function checkNewDevice(device: string, force: boolean): Promise<DeviceFacts> {
  const facts = await deviceFacts(device);
  const name = path.basename(facts.real);
  if ((await devicesInUse()).has(facts.real))
    throw badRequest(`${device} is mounted or in use as swap; unmount it first.`, { device });
  const holders = await fs.readdir(`/sys/class/block/${name}/holders`).catch(() => []);
  if (holders.length > 0)
    throw badRequest(`${device} is held by ${holders.join(', ')}; free it first.`, { device });
  if (facts.sizeBytes < MIN_DEVICE_BYTES)
    throw badRequest(
      `${device} holds ${facts.sizeBytes} bytes; shared storage needs at least ${MIN_DEVICE_BYTES} (1 GiB) per device.`,
      { device, size_bytes: facts.sizeBytes },
    );
  if (facts.signature?.TYPE && !force)
    throw badRequest(
      `${device} already holds a ${facts.signature.TYPE} filesystem${facts.signature.LABEL ? ` labelled "${facts.signature.LABEL}"` : ''}; name it with "force": true to overwrite it (its data is lost).`,
      { device, filesystem: facts.signature.TYPE },
    );
  return facts;
}
