/**
 * Addresses inside one library: storage slots and import/export slots are 1-based, drives
 * 0-based, as the spec numbers them. The SMC layer maps its element addresses onto these.
 */
export type ElementKind = 'storage' | 'ie' | 'drive';

export interface ElementRef {
  kind: ElementKind;
  num: number;
}

export const storageSlot = (num: number): ElementRef => ({ kind: 'storage', num });
export const ieSlot = (num: number): ElementRef => ({ kind: 'ie', num });
export const driveElement = (index: number): ElementRef => ({ kind: 'drive', num: index });

const LOCATION_PREFIX: Record<ElementKind, string> = { storage: 'slot', ie: 'ie', drive: 'drive' };

/** The spec's cartridge `location`: `slot:N`, `ie:N`, `drive:N`. */
export function formatLocation(ref: ElementRef): string {
  return `${LOCATION_PREFIX[ref.kind]}:${ref.num}`;
}

export function parseLocation(text: string): ElementRef | undefined {
  const m = /^(slot|ie|drive):(\d+)$/.exec(text);
  if (!m) return undefined;
  const kind: ElementKind = m[1] === 'slot' ? 'storage' : m[1] === 'ie' ? 'ie' : 'drive';
  return { kind, num: Number(m[2]) };
}

/** For event details and messages: `slot 3`, `ie 2`, `drive 0`. */
export function describeElement(ref: ElementRef): string {
  return `${LOCATION_PREFIX[ref.kind]} ${ref.num}`;
}

/**
 * The int the spec's `source_slot` carries: the storage slot a loaded cartridge came from (and
 * returns to on unload), 0 when it came from an import/export slot (it goes to the first empty
 * storage slot then) or the drive is empty.
 */
export function slotNumber(ref: ElementRef | undefined): number {
  return ref?.kind === 'storage' ? ref.num : 0;
}

export function sameElement(a: ElementRef, b: ElementRef): boolean {
  return a.kind === b.kind && a.num === b.num;
}
