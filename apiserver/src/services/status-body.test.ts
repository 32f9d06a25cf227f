import { gunzipSync } from 'node:zlib';
import { LegacyLibraryView, PoolFigures, StatusView } from '@vtl/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StatusFixture } from '../test/status-fixture.js';
import * as gzip from './gzip-view.js';
import { libraryLifecycle } from './library-lifecycle.js';
import { cartridgesBytes, legacyLibraryBytes, statusBytes } from './status-body.js';
import {
  cartridgeView,
  fcFabric,
  iscsiFabric,
  libraryCartridges,
  liveLibrary,
  poolFigures,
} from './status-view.js';

const LibraryEntry = StatusView.shape.libraries.element;

/** GET /api/status after its `updated_at` as the single-buffer implementation before the parts made it. */
function previousRest(f: StatusFixture): string {
  const s = f.snapshot();
  const fc = fcFabric(s);
  const cartridges = cartridgeView(s);
  const libraries = s.libraries
    .filter((l) => !l.deleting)
    .map((lib) =>
      JSON.stringify(
        LibraryEntry.parse({
          ...liveLibrary(s, lib),
          cartridges: libraryCartridges(cartridges, lib.id),
          ...libraryLifecycle(s, lib.id),
        }),
      ),
    );
  return (
    `"libraries":[${libraries.join(',')}],` +
    `"pools":${JSON.stringify(z.array(PoolFigures).parse(poolFigures(s)))},` +
    `"fc":${JSON.stringify(StatusView.shape.fc.parse(fc.status))},` +
    `"cartridges":${JSON.stringify(z.array(z.any()).parse(cartridges))},` +
    `"fabrics":${JSON.stringify(StatusView.shape.fabrics.parse({ fc: fc.fabric, iscsi: iscsiFabric(s) }))},` +
    `"gitops":[]}`
  );
}

/** The view's body as sent, and checked against the previous implementation's bytes. */
function body(f: StatusFixture): { chunks: Buffer[]; whole: Buffer } {
  const chunks = statusBytes(f.views);
  const whole = Buffer.concat(chunks);
  expect(chunks[0]!.toString()).toMatch(/^\{"updated_at":"[^"]+",$/);
  expect(Buffer.concat(chunks.slice(1)).toString()).toBe(previousRest(f));
  expect(StatusView.parse(JSON.parse(whole.toString())).libraries).toHaveLength(
    f.s.libraries.filter((l) => !l.deleting).length,
  );
  return { chunks, whole };
}

function gunzipped(chunks: Buffer[]): Buffer {
  return gunzipSync(Buffer.concat(gzip.gzipView(chunks)));
}

describe('GET /api/status in parts', () => {
  it('serves the bytes the single-buffer view served, as parts kept apart', () => {
    const f = new StatusFixture(3, 40);
    const { chunks, whole } = body(f);
    expect(chunks).toHaveLength(5);
    // The cartridge list is the very buffer GET /api/cartridges sends.
    expect(chunks[3]).toBe(cartridgesBytes(f.views));
    expect(gunzipped(chunks).equals(whole)).toBe(true);
  });

  it("re-encodes and deflates only the small parts when a pool's figures change", () => {
    const f = new StatusFixture(4, 100);
    const first = body(f).chunks;
    gzip.gzipView(first);
    for (let n = 1; n <= 5; n++) {
      f.poolFigures(1 + (n % 4), n * 1_000_000);
      const before = gzip.deflateCount;
      const { chunks, whole } = body(f);
      expect(chunks[1]).toBe(first[1]); // the libraries: not encoded again
      expect(chunks[3]).toBe(first[3]); // the cartridge list: not encoded again
      expect(chunks[2]).not.toBe(first[2]);
      expect(chunks[2]!.toString()).toContain(`"fs_used_bytes":${n * 1_000_000}`);
      expect(gunzipped(chunks).equals(whole)).toBe(true);
      // The pools/fc part and the tail deflated, a few KB; the large parts' deflates kept.
      expect(gzip.deflateCount - before).toBe(2);
      expect(chunks[2]!.length + chunks[4]!.length).toBeLessThan(8 * 1024);
    }
  });

  it('rebuilds the libraries part when a library changes, keeping the other entries and the list', () => {
    const f = new StatusFixture(3, 60);
    const first = body(f).chunks;
    f.change(
      (s) => {
        s.libraries[1] = { ...s.libraries[1]!, name: 'renamed' };
      },
      ['library-2'],
    );
    const { chunks, whole } = body(f);
    expect(chunks[1]).not.toBe(first[1]);
    expect(chunks[1]!.toString()).toContain('"name":"renamed"');
    expect(chunks[3]).toBe(first[3]);
    expect(gunzipped(chunks).equals(whole)).toBe(true);
    // A library gone: the part without it, as before.
    f.change(
      (s) => {
        s.libraries[0] = { ...s.libraries[0]!, deleting: true };
      },
      ['library-1'],
    );
    const after = body(f);
    expect(
      JSON.parse(after.whole.toString()).libraries.map((l: { library: { id: number } }) => l.library.id),
    ).toEqual([2, 3]);
    expect(gunzipped(after.chunks).equals(after.whole)).toBe(true);
  });

  it('decodes whole through a run of changes of every kind, each form with its own length', () => {
    const f = new StatusFixture(2, 50);
    for (let n = 0; n < 12; n++) {
      if (n % 3 === 0) f.poolFigures(1 + (n % 2), n);
      else if (n % 3 === 1)
        f.change(
          (s) => {
            s.cartridges = s.cartridges.map((c, i) => (i === n ? { ...c, last_export_gen: `gen-${n}` } : c));
          },
          ['cartridges'],
        );
      else
        f.change(
          (s) => {
            s.libraries[n % 2] = { ...s.libraries[n % 2]!, serial: `SER-${n}` };
          },
          [`library-${1 + (n % 2)}`],
        );
      const { chunks, whole } = body(f);
      const gz = gzip.gzipView(chunks);
      const gzLength = gz.reduce((sum, c) => sum + c.length, 0);
      expect(Buffer.concat(gz)).toHaveLength(gzLength);
      expect(gunzipSync(Buffer.concat(gz)).equals(whole)).toBe(true);
    }
  });

  it('keeps GET /api/library through pool figures, its bytes those the string view made', () => {
    const f = new StatusFixture(3, 30);
    const previous = (): string => {
      const s = f.snapshot();
      const entries = s.libraries
        .filter((l) => !l.deleting)
        .map((lib) => {
          const { library, drives, slots } = liveLibrary(s, lib);
          const { name: _name, ...rest } = library;
          return JSON.stringify(
            LegacyLibraryView.shape.libraries.element.parse({ library: rest, drives, slots }),
          );
        });
      return `{"libraries":[${entries.join(',')}]}`;
    };
    const first = legacyLibraryBytes(f.views);
    expect(first.toString()).toBe(previous());
    f.poolFigures(2, 5);
    expect(legacyLibraryBytes(f.views)).toBe(first);
    f.change(
      (s) => {
        s.libraries[2] = { ...s.libraries[2]!, serial: 'NEWSERIAL' };
      },
      ['library-3'],
    );
    const second = legacyLibraryBytes(f.views);
    expect(second).not.toBe(first);
    expect(second.toString()).toBe(previous());
    expect(second.toString()).toContain('NEWSERIAL');
  });
});
