import { z } from 'zod';
import { INITIATOR_NAME_INPUT, TEXT_LIMITS, WWPN_INPUT, displayText } from '@vtl/api';
import { API_VERSION, DNS_LABEL, Metadata, SecretKeyRef, statusFields, type SpecRule } from './common.js';

/**
 * CHAP of an iSCSI initiator: usernames in the manifest, secrets by reference only (a secret
 * registered through the API), so nothing secret sits in Git.
 */
export const InitiatorChapSpec = z.strictObject({
  username: z.string().min(1).max(223).describe('CHAP_N the initiator logs in with'),
  secretRef: SecretKeyRef('secret').describe('Where the CHAP secret is kept (12 to 64 characters)'),
  mutualUsername: z
    .string()
    .min(1)
    .max(223)
    .optional()
    .describe('Mutual CHAP: the name the target answers with'),
  mutualSecretRef: SecretKeyRef('mutualSecret').optional().describe('Mutual CHAP: where its secret is kept'),
});

/** TapeInitiator: a backup host allowed through the access control (REST: POST /api/targets/acls). */
export const TapeInitiatorSpec = z.strictObject({
  wwpn: z
    .string()
    .regex(
      INITIATOR_NAME_INPUT,
      'wwpn: naa.<16 hex>, colon-separated bytes or 16 hex digits (FC), or an iqn./eui. name (iSCSI)',
    )
    .describe('Initiator WWPN (FC) or IQN (iSCSI): its identity on the appliance'),
  alias: displayText('alias', TEXT_LIMITS.name).optional().describe('Display name (default metadata.name)'),
  fabric: z.enum(['fc', 'iscsi']).optional().describe('fc or iscsi (default: from the wwpn form)'),
  ports: z
    .array(z.string().regex(WWPN_INPUT, 'ports: port WWPNs (naa.<16 hex>)'))
    .optional()
    .describe('Target port WWPNs the initiator may log in through; omitted = all ports, empty = none'),
  libraryRefs: z
    .array(z.string().regex(DNS_LABEL, 'libraryRefs: metadata.name of VirtualTapeLibrary objects'))
    .optional()
    .describe('Libraries mapped to the initiator, by name; omitted = all libraries, empty = none'),
  chap: InitiatorChapSpec.optional().describe('iSCSI CHAP (fabric iscsi only)'),
});
export type TapeInitiatorSpec = z.infer<typeof TapeInitiatorSpec>;

export const TapeInitiatorStatus = z.object({
  ...statusFields,
  registeredName: z.string().optional().describe('The wwpn as stored (naa.<16 hex> or lower-case IQN)'),
  applied: z.boolean().optional(),
  loggedIn: z.boolean().optional(),
});

export const TapeInitiator = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('TapeInitiator'),
  metadata: Metadata(63),
  spec: TapeInitiatorSpec,
  status: TapeInitiatorStatus.optional(),
});
export type TapeInitiator = z.infer<typeof TapeInitiator>;

/** The wwpn is the registry key; the fabric follows from it. */
export const tapeInitiatorImmutable = ['wwpn', 'fabric'] as const;

const ISCSI =
  "(has(self.fabric) ? self.fabric == 'iscsi' : (self.wwpn.lowerAscii().startsWith('iqn.') || self.wwpn.lowerAscii().startsWith('eui.')))";

export const tapeInitiatorRules: SpecRule[] = [
  {
    rule: `!has(self.ports) || !${ISCSI}`,
    message: 'ports scopes FC target ports; leave it out for an iSCSI initiator',
    field: 'ports',
  },
  {
    rule: `!has(self.chap) || ${ISCSI}`,
    message: 'chap is for iSCSI initiators only (fabric iscsi, or an iqn./eui. wwpn)',
    field: 'chap',
  },
  {
    rule: '!has(self.chap) || has(self.chap.mutualUsername) == has(self.chap.mutualSecretRef)',
    message: 'mutual CHAP takes both chap.mutualUsername and chap.mutualSecretRef (or neither)',
    field: 'chap.mutualSecretRef',
  },
];
