import { z } from 'zod';
import { TEXT_LIMITS, displayText } from '../text.js';
import { normalizeWwpn } from '../identifiers.js';
import { ChapStatus, InitiatorChap } from './chap.js';
import { ManagedBy } from './managed-by.js';

/**
 * The WWPN input forms `normalizeWwpn` accepts (`naa.`-prefixed, colon-separated bytes, bare 16
 * hex digits), as a pattern so schemas (and the CRD) refuse malformed ones up front.
 */
export const WWPN_INPUT =
  /^(?:[nN][aA][aA]\.[0-9a-fA-F]{16}|[0-9a-fA-F]{16}|[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){7})$/;

/** iSCSI initiator names (RFC 3720 §3.2.6.3): `iqn.YYYY-MM.<reversed domain>[:<anything>]` or `eui.<16 hex>`. */
export const ISCSI_NAME_INPUT =
  /^(?:[iI][qQ][nN]\.\d{4}-\d{2}\.[A-Za-z0-9][A-Za-z0-9.-]*(?::\S{1,200})?|[eE][uU][iI]\.[0-9a-fA-F]{16})$/;

/** Either an FC WWPN in any accepted form or an iSCSI name: what `wwpn` of a create may hold. */
export const INITIATOR_NAME_INPUT = new RegExp(`${WWPN_INPUT.source}|${ISCSI_NAME_INPUT.source}`);

/** The fabric an initiator logs in through. `iscsi` is beyond the spec (docs/api.md). */
export const Fabric = z.enum(['fc', 'iscsi']);
export type Fabric = z.infer<typeof Fabric>;

const Wwpn = z
  .string()
  .regex(WWPN_INPUT, 'a port WWPN is naa.<16 hex>, colon-separated bytes or 16 hex digits');

const scopePorts = z
  .array(Wwpn)
  .optional()
  .describe('Target port WWPNs the initiator may log in through; omitted = all ports, empty = none');
const scopeLibraries = z
  .array(z.number().int().positive())
  .optional()
  .describe('Library ids mapped to the initiator; omitted = all libraries, empty = none');

/** Body of POST /api/targets/acls (§4.1); also the spec of the TapeInitiator CRD. */
export const InitiatorSpec = z.strictObject({
  wwpn: z
    .string()
    .regex(
      INITIATOR_NAME_INPUT,
      'wwpn: naa.<16 hex>, colon-separated bytes or 16 hex digits (FC), or an iqn./eui. name (iSCSI)',
    )
    .describe('Initiator WWPN in any accepted form (stored as naa.<16 hex>); the IQN for fabric iscsi'),
  alias: displayText('alias', TEXT_LIMITS.name).optional().describe('Display name'),
  fabric: Fabric.optional().describe('fc (default) or iscsi'),
  ports: scopePorts,
  libraries: scopeLibraries,
});
export type InitiatorSpec = z.infer<typeof InitiatorSpec>;

/** Body of PUT /api/targets/acls/{wwpn}: any of alias and the two scopes, same rules as create. */
export const InitiatorUpdate = z.strictObject({
  alias: displayText('alias', TEXT_LIMITS.name).optional(),
  ports: scopePorts,
  libraries: scopeLibraries,
});
export type InitiatorUpdate = z.infer<typeof InitiatorUpdate>;

/** Stored scope strings (§2.3): empty = all, `-` = none, else comma-joined values. */
export const SCOPE_ALL = '';
export const SCOPE_NONE = '-';

/** The registry record at keys.initiators.one(name): §2.3 without the observed fields. */
export const InitiatorRecord = z.object({
  wwpn: z.string(),
  alias: z.string(),
  fabric: Fabric,
  ports: z.string(),
  libraries: z.string(),
  created_at: z.string(),
  /** iSCSI CHAP usernames (beyond the spec); the secrets live under keys.initiatorSecrets. */
  chap: InitiatorChap.optional(),
  /** The GitOps source that owns the initiator (docs/gitops.md); absent when made through REST. */
  managed_by: ManagedBy.optional(),
});
export type InitiatorRecord = z.infer<typeof InitiatorRecord>;

/** §2.3 as GET /api/targets shows an initiator. */
export const InitiatorView = InitiatorRecord.extend({
  logged_in: z.boolean(),
  port_state: z.string(),
  applied: z.boolean(),
  chap: ChapStatus,
});
export type InitiatorView = z.infer<typeof InitiatorView>;

/** Omitted → all (''), empty list → none ('-'), else the values comma-joined. */
export function scopeString(values: readonly (string | number)[] | undefined): string {
  if (values === undefined) return SCOPE_ALL;
  if (values.length === 0) return SCOPE_NONE;
  return [...new Set(values.map(String))].join(',');
}

/** Whether a stored scope string lets `value` in. */
export function scopeIncludes(scope: string, value: string | number): boolean {
  if (scope === SCOPE_ALL) return true;
  if (scope === SCOPE_NONE) return false;
  return scope.split(',').includes(String(value));
}

/** iSCSI names compare case-insensitively (RFC 3722 folds them): stored lower-case. */
export function normalizeIscsiName(input: string): string | undefined {
  const s = input.trim();
  return ISCSI_NAME_INPUT.test(s) ? s.toLowerCase() : undefined;
}

/** The registry key of an initiator name in any accepted form, and its fabric; undefined if malformed. */
export function normalizeInitiatorName(input: string): { name: string; fabric: Fabric } | undefined {
  const wwpn = normalizeWwpn(input);
  if (wwpn) return { name: wwpn, fabric: 'fc' };
  const iqn = normalizeIscsiName(input);
  return iqn ? { name: iqn, fabric: 'iscsi' } : undefined;
}
