import { z } from 'zod';

/**
 * The WWPN input forms `normalizeWwpn` in @vtl/api accepts (`naa.`-prefixed, colon-separated
 * bytes, bare 16 hex digits), as a pattern so the CRD refuses malformed ones up front.
 */
export const WWPN_INPUT =
  /^(?:[nN][aA][aA]\.[0-9a-fA-F]{16}|[0-9a-fA-F]{16}|[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){7})$/;

const Wwpn = z.string().regex(WWPN_INPUT, 'wwpn: naa.<16 hex>, colon-separated bytes or 16 hex digits');

/**
 * Body of POST /api/targets/acls (spec §4.1). Defined here because @vtl/api has no schema for
 * it yet; move it there (and import it) once the apiserver's targets routes exist.
 */
export const InitiatorSpec = z.strictObject({
  wwpn: Wwpn.describe('Initiator WWPN; any accepted form, stored as naa.<16 hex>'),
  alias: z.string().max(64).optional().describe('Display name'),
  ports: z
    .array(Wwpn)
    .optional()
    .describe('Target port WWPNs the initiator may log in through; omitted = all ports, empty = none'),
  libraries: z
    .array(z.number().int().positive())
    .optional()
    .describe('Library ids mapped to the initiator; omitted = all libraries, empty = none'),
});
export type InitiatorSpec = z.infer<typeof InitiatorSpec>;
