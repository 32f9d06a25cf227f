import { z } from 'zod';
import { CARTRIDGE_LABEL } from './identifiers.js';

/** A cartridge label as requests carry it: trimmed, upper-cased, then checked. */
export const Label = z
  .string()
  .transform((s) => s.trim().toUpperCase())
  .pipe(
    z.string().regex(CARTRIDGE_LABEL, 'label must be six A-Z0-9 characters plus a media suffix such as L8'),
  );
