import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VtlError, badRequest } from '@vtl/api';
import { duplicateJsonKey } from './json-duplicate-keys.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A well-formed JSON Content-Type: the media type, optionally one `charset` parameter. Anything
 * else (`application/json;;;`, unknown or repeated parameters) is refused rather than guessed at.
 */
const JSON_CONTENT_TYPE = /^application\/json\s*(;\s*charset\s*=\s*("[^"]*"|[^";\s]+)\s*)?$/i;

/** The charset parameter of a Content-Type header, lower-cased; undefined when none is given. */
export function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m?.[1]?.toLowerCase();
}

/**
 * JSON bodies are read strictly (docs/api.md "Request bodies"): UTF-8 only (another charset is
 * 415), no byte order mark and no invalid UTF-8 (400: silently dropping or replacing bytes would
 * store something else than what was sent), and the top level must be an object (400: every
 * JSON body of the API is one, and `null` or `[]` must not read as "no fields"). Prototype
 * poisoning is refused as Fastify's own parser does, which this one wraps.
 */
export function registerBodyHygiene(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // No route reads text: a text/plain body is 415 rather than a string that fails validation.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: Buffer | string, done: (err: Error | null, body?: unknown) => void) => {
      if (!JSON_CONTENT_TYPE.test(request.headers['content-type'] ?? ''))
        return done(
          new VtlError(
            'unsupported_media_type',
            'Content-Type is malformed; send "application/json" or "application/json; charset=utf-8".',
          ),
        );
      const charset = charsetOf(request.headers['content-type']);
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
        return done(
          new VtlError(
            'unsupported_media_type',
            `JSON bodies are UTF-8; charset "${charset}" is not accepted. Send Content-Type: application/json (or charset=utf-8).`,
          ),
        );
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
        return done(badRequest('The body starts with a byte order mark; send JSON as UTF-8 without a BOM.'));
      let text: string;
      try {
        text = UTF8.decode(bytes);
      } catch {
        return done(badRequest('The body is not valid UTF-8; send JSON encoded as UTF-8.'));
      }
      if (text.trim() === '')
        return done(
          badRequest('The body is empty but Content-Type is application/json; send a JSON object.'),
        );
      parseJson(request, text, (err, value) => {
        if (err) return done(badRequest(`The body is not valid JSON (${err.message}); send a JSON object.`));
        const duplicate = duplicateJsonKey(text);
        if (duplicate !== undefined)
          return done(
            badRequest(
              `The body names "${duplicate.slice(0, 64)}" twice in one object; send each field once.`,
            ),
          );
        if (value === null || typeof value !== 'object' || Array.isArray(value))
          return done(
            badRequest(
              `The body must be a JSON object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}; see docs/api.md for the fields.`,
            ),
          );
        done(null, value);
      });
    },
  );
}
