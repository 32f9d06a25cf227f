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
import { libraryLifecycle } from './library-lifecycle.js';

const LibraryEntry = StatusView.shape.libraries.element;
const LegacyEntry = LegacyLibraryView.shape.libraries.element;

/** One library's part of GET /api/status, serialized; recomputed only when its inputs change. */
function libraryFragment(views: ViewCache, lib: LibrarySpec): string {
  return views.part(`status-library-${lib.id}`, views.libraryFingerprint(lib), () => {
    const s = views.snapshot();
    const cartridges = libraryCartridges(
      views.memo('cartridge-view', () => cartridgeView(s)),
      lib.id,
    );
    return JSON.stringify(
      LibraryEntry.parse({ ...liveLibrary(s, lib), cartridges, ...libraryLifecycle(s, lib.id) }),
    );
  });
}

/** The serialized cartridge list (§2.7), shared by GET /api/status and GET /api/cartridges. */
export function cartridgesJson(views: ViewCache): string {
  return views.part('cartridges-json', views.cartridgesFingerprint(), () => {
    const list = views.memo('cartridge-view', () => cartridgeView(views.snapshot()));
    return JSON.stringify(z.array(Cartridge).parse(list));
  });
}

/**
 * Everything of GET /api/status after `updated_at`, serialized: each library's part and the
 * cartridge list are kept between changes (a change costs the parts it touched); the whole is
 * built only when statusBytes encodes it, and not kept as a string beside those bytes.
 */
function statusRest(views: ViewCache): string {
  const s = views.snapshot();
  const fc = fcFabric(s);
  const libraries = s.libraries.filter((l) => !l.deleting).map((lib) => libraryFragment(views, lib));
  return (
    `"libraries":[${libraries.join(',')}],` +
    `"pools":${JSON.stringify(z.array(PoolFigures).parse(poolFigures(s)))},` +
    `"fc":${JSON.stringify(StatusView.shape.fc.parse(fc.status))},` +
    `"cartridges":${cartridgesJson(views)},` +
    `"fabrics":${JSON.stringify(StatusView.shape.fabrics.parse({ fc: fc.fabric, iscsi: iscsiFabric(s) }))},` +
    `"gitops":${JSON.stringify(views.gitopsStatus())}}`
  );
}

/**
 * GET /api/status as bytes to send, head and rest: the encoded rest is kept too, so a read
 * encodes only its `updated_at` head (a 2 MB view is neither re-encoded nor copied per request).
 */
export function statusBytes(views: ViewCache): [Buffer, Buffer] {
  const rest = views.memo('status-rest-bytes', () => Buffer.from(statusRest(views)));
  return [Buffer.from(`{"updated_at":${JSON.stringify(isoNow())},`), rest];
}

/**
 * GET /api/cartridges as bytes, kept while the list's inputs are (cartridgesFingerprint), not
 * only until the next change of any record: with 16 libraries each pool's figures change every
 * 5 s, and every such change encoded the 1.3 MB list again (and deflated it for the next gzip
 * reader). The same buffer, so its gzip copy is kept with it too (gzip-view.ts).
 */
export function cartridgesBytes(views: ViewCache): Buffer {
  return views.part('cartridges-bytes', views.cartridgesFingerprint(), () =>
    Buffer.from(cartridgesJson(views)),
  );
}

/** A memoised serialized view as bytes: encoded once per change, not once per request. */
export function asBytes(views: ViewCache, name: string, json: () => string): Buffer {
  return views.memo(`${name}-bytes`, () => Buffer.from(json()));
}

/**
 * GET /api/library (the older, smaller shape), serialized: each library's part is kept between
 * changes; the whole is built for asBytes, which keeps it encoded.
 */
export function legacyLibraryBody(views: ViewCache): string {
  const s = views.snapshot();
  const libraries = s.libraries
    .filter((l) => !l.deleting)
    .map((lib) =>
      views.part(`legacy-library-${lib.id}`, views.libraryFingerprint(lib), () => {
        const { library, drives, slots } = liveLibrary(s, lib);
        const { name: _name, ...rest } = library;
        return JSON.stringify(LegacyEntry.parse({ library: rest, drives, slots }));
      }),
    );
  return `{"libraries":[${libraries.join(',')}]}`;
}
