import { asciiField, binaryField, type MamAttributes, readMam, updateMam } from '../media/mam.js';

/**
 * Usage a drive keeps in a cartridge's MAM (SPC-4 7.4.2.2 device type attributes), as LTO
 * drives do: how often it was loaded, by which drives, and how much was written and read.
 * Backup software and tools such as sg_read_attr show these as the tape's wear and history.
 */
export const UsageAttribute = {
  LOAD_COUNT: 0x0003,
  /** Vendor (8) and serial (32) of the drive at the last load, then the three before it. */
  DEVICE_AT_LAST_LOAD: 0x020a,
  DEVICE_AT_LOAD_MINUS_1: 0x020b,
  DEVICE_AT_LOAD_MINUS_2: 0x020c,
  DEVICE_AT_LOAD_MINUS_3: 0x020d,
  MB_WRITTEN_IN_LIFE: 0x0220,
  MB_READ_IN_LIFE: 0x0221,
  MB_WRITTEN_THIS_LOAD: 0x0222,
  MB_READ_THIS_LOAD: 0x0223,
} as const;

/** The "megabytes" of these attributes: SPC-4 counts them in MiB (1,048,576 bytes). */
const MB = 1_048_576;
const DEVICE_HISTORY = [
  UsageAttribute.DEVICE_AT_LAST_LOAD,
  UsageAttribute.DEVICE_AT_LOAD_MINUS_1,
  UsageAttribute.DEVICE_AT_LOAD_MINUS_2,
  UsageAttribute.DEVICE_AT_LOAD_MINUS_3,
];

const counter = (attrs: MamAttributes, id: number) => Number(attrs.get(id)?.readBigUInt64BE(0) ?? 0n);

/** A load: one more on the count, and this drive first in the history of drives. */
export async function recordLoad(dir: string, drive: { vendor: string; serial: string }): Promise<void> {
  const attrs = await readMam(dir);
  const changes = new Map<number, Buffer | null>([
    [UsageAttribute.LOAD_COUNT, binaryField(counter(attrs, UsageAttribute.LOAD_COUNT) + 1)],
    [
      UsageAttribute.DEVICE_AT_LAST_LOAD,
      Buffer.concat([asciiField(drive.vendor, 8), asciiField(drive.serial, 32)]),
    ],
    [UsageAttribute.MB_WRITTEN_THIS_LOAD, binaryField(0)],
    [UsageAttribute.MB_READ_THIS_LOAD, binaryField(0)],
  ]);
  for (let i = 1; i < DEVICE_HISTORY.length; i++) {
    const older = attrs.get(DEVICE_HISTORY[i - 1]!);
    if (older) changes.set(DEVICE_HISTORY[i]!, older);
  }
  await updateMam(dir, changes);
}

/**
 * The end of a load: its bytes join the lifetime totals and stay as "this load" until the next
 * one. Written when the cartridge leaves the drive, as a drive writes the chip at unload; a crash
 * of the emulator while loaded loses that load's figures, not the earlier ones.
 */
export async function recordUnload(dir: string, load: { written: number; read: number }): Promise<void> {
  const attrs = await readMam(dir);
  await updateMam(
    dir,
    new Map([
      [
        UsageAttribute.MB_WRITTEN_IN_LIFE,
        binaryField(counter(attrs, UsageAttribute.MB_WRITTEN_IN_LIFE) + load.written / MB),
      ],
      [
        UsageAttribute.MB_READ_IN_LIFE,
        binaryField(counter(attrs, UsageAttribute.MB_READ_IN_LIFE) + load.read / MB),
      ],
      [UsageAttribute.MB_WRITTEN_THIS_LOAD, binaryField(load.written / MB)],
      [UsageAttribute.MB_READ_THIS_LOAD, binaryField(load.read / MB)],
    ]),
  );
}

/** The usage attributes as READ ATTRIBUTE reports them while a load is still going on. */
export function withCurrentLoad(attrs: MamAttributes, load: { written: number; read: number }): void {
  attrs.set(UsageAttribute.MB_WRITTEN_THIS_LOAD, binaryField(load.written / MB));
  attrs.set(UsageAttribute.MB_READ_THIS_LOAD, binaryField(load.read / MB));
  attrs.set(
    UsageAttribute.MB_WRITTEN_IN_LIFE,
    binaryField(counter(attrs, UsageAttribute.MB_WRITTEN_IN_LIFE) + load.written / MB),
  );
  attrs.set(
    UsageAttribute.MB_READ_IN_LIFE,
    binaryField(counter(attrs, UsageAttribute.MB_READ_IN_LIFE) + load.read / MB),
  );
}
