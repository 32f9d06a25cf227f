import { Cartridge, LegacyLibraryView, PoolFigures, StatusView, isoNow, type LibrarySpec } from '@vtl/api';
import { z } from 'zod';
import {
  cartridgeView,
  fcFabric,
  iscsiFabric,
  libraryCartridges,
  liveLibrary,
  poolFigures,
} from './status-view.js';
import type { ViewCache } from './view-cache.js';
import { keptPart } from './gzip-view.js';
import { libraryLifecycle } from './library-lifecycle.js';

const LibraryEntry = StatusView.shape.libraries.element;
const LegacyEntry = LegacyLibraryView.shape.libraries.element;

/** One library's entry of GET /api/status, serialized and encoded. */
function libraryEntryBytes(views: ViewCache, lib: LibrarySpec): Buffer {
  const s = views.snapshot();
  const cartridges = libraryCartridges(
    views.memo('cartridge-view', () => cartridgeView(s)),
    lib.id,
  );
  return Buffer.from(
    JSON.stringify(
      LibraryEntry.parse({ ...liveLibrary(s, lib), cartridges, ...libraryLifecycle(s, lib.id) }),
    ),
  );
}

/** A view's libraries, kept as one buffer, and each library's entry within it. */
interface LibrariesPart {
  /** The libraries shown and each one's fingerprint: equal keys, equal bytes. */
  key: string;
  bytes: Buffer;
  /** Each library's entry as a view into `bytes`, by id, with the fingerprint it was made for. */
  entries: Map<number, { fingerprint: string; bytes: Buffer }>;
}
const librariesParts = new WeakMap<ViewCache, Map<string, LibrariesPart>>();

const COMMA = Buffer.from(',');

/**
 * `open`, each library's entry joined by commas, `close`, as one kept buffer: rebuilt only when
 * a library's fingerprint changes (or the set of libraries), and then only that library's entry
 * is serialized again, the others copied from the buffer before. Each entry is kept as a view
 * into the one buffer, not beside it (as a string).
 */
function librariesJoined(
  views: ViewCache,
  name: string,
  open: Buffer,
  close: Buffer,
  entry: (lib: LibrarySpec) => Buffer,
): Buffer {
  return views.memo(name, () => {
    const libs = views.snapshot().libraries.filter((l) => !l.deleting);
    const prints = libs.map((lib) => views.libraryFingerprint(lib));
    const key = libs.map((lib, i) => `${lib.id}:${prints[i]}`).join('\n');
    let kept = librariesParts.get(views);
    if (!kept) librariesParts.set(views, (kept = new Map()));
    const before = kept.get(name);
    if (before?.key === key) return before.bytes;
    const pieces: Buffer[] = [open];
    const entries = libs.map((lib, i) => {
      const had = before?.entries.get(lib.id);
      const bytes = had && had.fingerprint === prints[i] ? had.bytes : entry(lib);
      if (i > 0) pieces.push(COMMA);
      pieces.push(bytes);
      return bytes;
    });
    pieces.push(close);
    const bytes = keptPart(Buffer.concat(pieces));
    const part: LibrariesPart = { key, bytes, entries: new Map() };
    let at = open.length;
    libs.forEach((lib, i) => {
      const length = entries[i]!.length;
      part.entries.set(lib.id, { fingerprint: prints[i]!, bytes: bytes.subarray(at, at + length) });
      at += length + COMMA.length;
    });
    kept.set(name, part);
    return bytes;
  });
}

const STATUS_OPEN = Buffer.from('"libraries":[');
const STATUS_CLOSE = Buffer.from('],');

/** `"libraries":[...],` of GET /api/status (librariesJoined). */
function librariesBytes(views: ViewCache): Buffer {
  return librariesJoined(views, 'status-libraries', STATUS_OPEN, STATUS_CLOSE, (lib) =>
    libraryEntryBytes(views, lib),
  );
}

/**
 * The serialized cartridge list (§2.7) as bytes, shared by GET /api/status and GET
 * /api/cartridges: kept while the list's inputs are (cartridgesFingerprint), not only until the
 * next change of any record: with 16 libraries each pool's figures change every 5 s, and every
 * such change encoded the 1.3 MB list again (and deflated it for the next gzip reader). The same
 * buffer, so its gzip copy is kept with it too (gzip-view.ts).
 */
export function cartridgesBytes(views: ViewCache): Buffer {
  return views.part('cartridges-bytes', views.cartridgesFingerprint(), () => {
    const list = views.memo('cartridge-view', () => cartridgeView(views.snapshot()));
    return keptPart(Buffer.from(JSON.stringify(z.array(Cartridge).parse(list))));
  });
}

/** The cartridge list as a string (tests; the views send cartridgesBytes). */
export function cartridgesJson(views: ViewCache): string {
  return cartridgesBytes(views).toString();
}

/**
 * The small parts of GET /api/status around the kept cartridge list, made once per cache
 * version: `"pools":...,"fc":...,"cartridges":` and `,"fabrics":...,"gitops":...}`. A pool's
 * figures (rewritten every 5 s per pool) change these few KB, not the libraries or the list.
 */
function statusSmallParts(views: ViewCache): { middle: Buffer; tail: Buffer } {
  return views.memo('status-small-parts', () => {
    const s = views.snapshot();
    const fc = fcFabric(s);
    const middle =
      `"pools":${JSON.stringify(z.array(PoolFigures).parse(poolFigures(s)))},` +
      `"fc":${JSON.stringify(StatusView.shape.fc.parse(fc.status))},` +
      `"cartridges":`;
    const tail =
      `,"fabrics":${JSON.stringify(StatusView.shape.fabrics.parse({ fc: fc.fabric, iscsi: iscsiFabric(s) }))},` +
      `"gitops":${JSON.stringify(views.gitopsStatus())}}`;
    return { middle: keptPart(Buffer.from(middle)), tail: keptPart(Buffer.from(tail)) };
  });
}

/**
 * GET /api/status as bytes to send: its `updated_at` head, made per request, then the parts
 * kept between changes, each by its own inputs: the libraries (libraryFingerprint of each), the
 * small parts (per cache version), the cartridge list (cartridgesFingerprint), the small tail.
 * A read encodes only the head; a change re-encodes (and, for gzip readers, deflates) only the
 * parts whose inputs changed; the large parts go to the socket each in a write of its own
 * (plugins/view-body.ts).
 */
export function statusBytes(views: ViewCache): Buffer[] {
  const libraries = librariesBytes(views);
  const { middle, tail } = statusSmallParts(views);
  return [
    Buffer.from(`{"updated_at":${JSON.stringify(isoNow())},`),
    libraries,
    middle,
    cartridgesBytes(views),
    tail,
  ];
}

/** A memoised serialized view as bytes: encoded once per change, not once per request. */
export function asBytes(views: ViewCache, name: string, json: () => string): Buffer {
  return views.memo(`${name}-bytes`, () => Buffer.from(json()));
}

const LEGACY_OPEN = Buffer.from('{"libraries":[');
const LEGACY_CLOSE = Buffer.from(']}');

/**
 * GET /api/library (the older, smaller shape) as bytes: kept while every library's fingerprint
 * is (librariesJoined), so a pool's figures no longer encode it, nor deflate it, again.
 */
export function legacyLibraryBytes(views: ViewCache): Buffer {
  return librariesJoined(views, 'legacy-libraries', LEGACY_OPEN, LEGACY_CLOSE, (lib) => {
    const { library, drives, slots } = liveLibrary(views.snapshot(), lib);
    const { name: _name, ...rest } = library;
    return Buffer.from(JSON.stringify(LegacyEntry.parse({ library: rest, drives, slots })));
  });
}
