import { z } from 'zod';

/**
 * C0 controls (including NUL, CR, LF, TAB), DEL and C1 controls. A display string holding one can
 * forge log lines, break a terminal or a CSV export, or hide text in the console, so every
 * user-supplied name refuses them.
 */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Markup characters: a display name never needs them, and refusing them keeps names inert in HTML. */
export const MARKUP_CHARS = /[<>]/;
/**
 * Half of a UTF-16 surrogate pair on its own (JSON's `\ud800`): no character, not encodable as
 * UTF-8, so it would be stored as something else than was sent, or break a reader.
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * White space at either end of a string (JS `\s`: Unicode White_Space, including no-break and
 * ideographic spaces, and the BOM). It is invisible in the console and in lists, so `"lib "` and
 * `"lib"` would look like one name while differing wherever a name must be typed exactly (a
 * library delete's `confirm`, a GitOps manifest compared with the stored record). Display
 * strings refuse it rather than trim it: what is stored is what was sent, and a refused request
 * changes nothing.
 */
export const EDGE_WHITE_SPACE = /^\s|\s$/;

/** Length limits of user-supplied display strings (docs/api.md "Input hygiene"). */
export const TEXT_LIMITS = {
  /** Names and aliases: library, remote, API key, initiator alias, recovered library name. */
  name: 64,
  /** Bucket region. */
  region: 64,
  /** Bucket name (S3 allows 63; other stores a little more). */
  bucket: 255,
  /** Access key id. */
  accessKey: 256,
  /** Key prefix inside a bucket. */
  prefix: 512,
} as const;

/**
 * A display string (a name, alias or description of any resource) of at most `max` characters,
 * kept exactly as sent: no lone surrogate, control character, `<`/`>`, or white space at either
 * end (docs/api.md "Request bodies and input hygiene"). `field` names the field in the message
 * so the error says what to fix.
 */
export function displayText(field: string, max: number) {
  return plainText(field, max).refine((s) => !MARKUP_CHARS.test(s), `${field}: < and > are not allowed`);
}

/**
 * An identifier or key id sent by the operator (access key id, system name, library serial): no
 * lone surrogate, control character or white space at either end, any other text kept as sent.
 */
export function plainText(field: string, max: number) {
  return secretText(field, max).refine(
    (s) => !EDGE_WHITE_SPACE.test(s),
    `${field}: no white space at the start or the end`,
  );
}

/** A secret (secret access key): no lone surrogate or control character; kept byte for byte. */
export function secretText(field: string, max: number) {
  return z
    .string()
    .max(max, `${field}: at most ${max} characters`)
    .refine((s) => !LONE_SURROGATE.test(s), `${field}: a lone UTF-16 surrogate is not a character`)
    .refine((s) => !CONTROL_CHARS.test(s), `${field}: control characters (C0, C1, DEL) are not allowed`);
}
