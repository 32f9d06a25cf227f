import type { ElementKind, ElementRef } from '../inventory/elements.js';

/** SMC element type codes (SMC-3 table 6). */
export const ElementType = {
  ALL: 0,
  MEDIUM_TRANSPORT: 1,
  STORAGE: 2,
  IMPORT_EXPORT: 3,
  DATA_TRANSFER: 4,
} as const;

/** First element address of each type, as an IBM library numbers them. */
export interface ElementLayout {
  transport: number;
  importExport: number;
  dataTransfer: number;
  storage: number;
}

/**
 * The addressing of IBM's own libraries, so scripts and backup software configured against the
 * real hardware see the same numbers: TS3100/TS3200 (3573-TL) and TS3500 (03584L32).
 */
export const IBM_ELEMENT_LAYOUTS: Readonly<Record<string, ElementLayout>> = {
  '3573-TL': { transport: 0x0001, importExport: 0x0010, dataTransfer: 0x0100, storage: 0x1000 },
  '03584L32': { transport: 0x0001, importExport: 0x0300, dataTransfer: 0x0101, storage: 0x0400 },
};

export interface ElementCounts {
  numSlots: number;
  numIe: number;
  numDrives: number;
}

/** One element as READ ELEMENT STATUS walks them; the picker has no inventory cell. */
export interface SmcElement {
  address: number;
  type: number;
  ref?: ElementRef;
}

const TYPE_OF_KIND: Record<ElementKind, number> = {
  storage: ElementType.STORAGE,
  ie: ElementType.IMPORT_EXPORT,
  drive: ElementType.DATA_TRANSFER,
};

/** Maps SMC element addresses to the inventory's slots, I/E slots and drives and back. */
export class ElementMap {
  readonly layout: ElementLayout;
  private readonly all: SmcElement[];

  constructor(
    product: string,
    readonly counts: ElementCounts,
  ) {
    this.layout = IBM_ELEMENT_LAYOUTS[product] ?? IBM_ELEMENT_LAYOUTS['3573-TL']!;
    const all: SmcElement[] = [{ address: this.layout.transport, type: ElementType.MEDIUM_TRANSPORT }];
    for (let i = 1; i <= counts.numIe; i++) all.push(this.element({ kind: 'ie', num: i }));
    for (let i = 0; i < counts.numDrives; i++) all.push(this.element({ kind: 'drive', num: i }));
    for (let i = 1; i <= counts.numSlots; i++) all.push(this.element({ kind: 'storage', num: i }));
    this.all = all.sort((a, b) => a.address - b.address);
  }

  addressOf(ref: ElementRef): number {
    switch (ref.kind) {
      case 'storage':
        return this.layout.storage + ref.num - 1;
      case 'ie':
        return this.layout.importExport + ref.num - 1;
      case 'drive':
        return this.layout.dataTransfer + ref.num;
    }
  }

  /** The element at an address, or undefined when the library has none there. */
  resolve(address: number): SmcElement | undefined {
    return this.all.find((e) => e.address === address);
  }

  /** Elements of a type (0: all) at or above an address, in address order. */
  from(type: number, start: number): SmcElement[] {
    return this.all.filter((e) => (type === ElementType.ALL || e.type === type) && e.address >= start);
  }

  first(type: number): number {
    return this.all.find((e) => e.type === type)?.address ?? 0;
  }

  count(type: number): number {
    return this.all.filter((e) => e.type === type).length;
  }

  private element(ref: ElementRef): SmcElement {
    return { address: this.addressOf(ref), type: TYPE_OF_KIND[ref.kind], ref };
  }
}
