import { z } from 'zod';
import { Drive, LiveLibrary, Slot } from './live.js';
import { Cartridge, LibraryCartridge } from './cartridge.js';
import { PoolFigures } from './pool.js';
import { LibraryLifecycle } from './library.js';

/** §2.9 GET /api/status */
export const StatusView = z.object({
  updated_at: z.string(),
  libraries: z.array(
    z.object({
      library: LiveLibrary,
      drives: z.array(Drive),
      slots: z.array(Slot),
      cartridges: z.array(LibraryCartridge),
      /** Beyond the spec: the library's lifecycle phase and conditions (GET /api/libraries/{lib}/status). */
      ...LibraryLifecycle.shape,
    }),
  ),
  pools: z.array(PoolFigures),
  fc: z.object({
    target_wwn: z.literal(''),
    verified: z.boolean(),
    no_hba: z.boolean(),
    detail: z.string(),
    verified_at: z.string(),
  }),
  cartridges: z.array(Cartridge),
  fabrics: z.object({
    fc: z.object({
      present: z.boolean(),
      verified: z.boolean(),
      detail: z.string(),
      sessions: z.number().int(),
    }),
    /** Beyond the spec: the userspace iSCSI target of each node. */
    iscsi: z.object({ present: z.boolean(), portals: z.array(z.string()), sessions: z.number().int() }),
  }),
  /** Beyond the spec: each GitOps Git source's applied commit and last outcome (docs/gitops.md). */
  gitops: z
    .array(
      z.object({
        source: z.string(),
        applied_revision: z.string(),
        outcome: z.string(),
        last_poll_at: z.string(),
      }),
    )
    .optional(),
});
export type StatusView = z.infer<typeof StatusView>;

/** GET /api/library: the older shape, without display names or the cartridge state join. */
export const LegacyLibraryView = z.object({
  libraries: z.array(
    z.object({
      library: LiveLibrary.omit({ name: true }),
      drives: z.array(Drive),
      slots: z.array(Slot),
    }),
  ),
});
