import { z } from 'zod';

/**
 * CHAP for iSCSI initiators (beyond the spec; RFC 7143 12.1.3). Usernames are stored with the
 * initiator record and shown; secrets are write-only, kept apart under
 * keys.initiatorSecrets (sealed at rest like every record under /vtl/secrets/).
 */

/** Secret lengths: 12 is RFC 7143's 96-bit floor and the Windows initiator's minimum. */
export const CHAP_SECRET_MIN = 12;
export const CHAP_SECRET_MAX = 64;
/** As long as an iSCSI name (RFC 7143 4.2.7.1), which many set-ups use as the CHAP username. */
export const CHAP_USERNAME_MAX = 223;

/** Visible ASCII only: no spaces or control characters, so every initiator's config file takes it. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

const username = (field: string) =>
  z
    .string()
    .min(1, `${field} is required`)
    .max(CHAP_USERNAME_MAX, `${field} is at most ${CHAP_USERNAME_MAX} characters`)
    .regex(VISIBLE_ASCII, `${field} takes visible ASCII characters only (no spaces or control characters)`);

// Messages never echo the value: it is a secret.
const secret = (field: string) =>
  z
    .string()
    .min(CHAP_SECRET_MIN, `${field} is ${CHAP_SECRET_MIN} to ${CHAP_SECRET_MAX} characters`)
    .max(CHAP_SECRET_MAX, `${field} is ${CHAP_SECRET_MIN} to ${CHAP_SECRET_MAX} characters`)
    .regex(VISIBLE_ASCII, `${field} takes visible ASCII characters only (no spaces or control characters)`);

/** `chap` of POST and PUT /api/targets/acls: the whole CHAP set-up of one iSCSI initiator. */
export const ChapInput = z
  .strictObject({
    username: username('chap.username').describe('CHAP_N the initiator logs in with'),
    secret: secret('chap.secret').describe('Secret the initiator answers the target with (write-only)'),
    mutual_username: username('chap.mutual_username')
      .optional()
      .describe('Mutual CHAP: the name the target answers the initiator with'),
    mutual_secret: secret('chap.mutual_secret')
      .optional()
      .describe('Mutual CHAP: the secret the target answers with (write-only)'),
  })
  .superRefine((c, ctx) => {
    if ((c.mutual_username === undefined) !== (c.mutual_secret === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [c.mutual_username === undefined ? 'mutual_username' : 'mutual_secret'],
        message: 'mutual CHAP takes both mutual_username and mutual_secret (or neither, for one-way CHAP)',
      });
    // RFC 7143 12.1.3: a secret used for one direction must not be used for the other.
    if (c.mutual_secret !== undefined && c.mutual_secret === c.secret)
      ctx.addIssue({
        code: 'custom',
        path: ['mutual_secret'],
        message: 'mutual_secret must differ from secret: one secret per direction (RFC 7143 12.1.3)',
      });
  });
export type ChapInput = z.infer<typeof ChapInput>;

/** The non-secret part, stored in the initiator record (absent: no CHAP). */
export const InitiatorChap = z.object({
  username: z.string(),
  /** '' for one-way CHAP. */
  mutual_username: z.string(),
});
export type InitiatorChap = z.infer<typeof InitiatorChap>;

/**
 * The record at keys.initiatorSecrets.one(name): the whole set-up, usernames included, so a
 * reader that catches it alone (the nodeagent between two reads) still has matching pairs.
 */
export const InitiatorChapSecret = z.object({
  username: z.string(),
  secret: z.string(),
  /** '' for one-way CHAP (both). */
  mutual_username: z.string(),
  mutual_secret: z.string(),
});
export type InitiatorChapSecret = z.infer<typeof InitiatorChapSecret>;

/** How the targets view shows an initiator's CHAP: whether it is set, and the usernames. */
export const ChapStatus = z.object({
  enabled: z.boolean(),
  username: z.string(),
  mutual: z.boolean(),
  mutual_username: z.string(),
});
export type ChapStatus = z.infer<typeof ChapStatus>;

/** The view of a stored CHAP set-up (never a secret). */
export function chapStatus(chap: InitiatorChap | undefined): ChapStatus {
  return {
    enabled: chap !== undefined,
    username: chap?.username ?? '',
    mutual: !!chap?.mutual_username,
    mutual_username: chap?.mutual_username ?? '',
  };
}
