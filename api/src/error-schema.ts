import { z } from 'zod';
import { ERROR_CODES, type ErrorBody as ErrorBodyShape } from './errors.js';

/** The error codes as a schema (OpenAPI, op records); the type is errors.ts's. */
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** The one error body of every 4xx/5xx response (docs/errors.md). */
export const ErrorBody = z.object({
  error: z.object({
    code: ErrorCode,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
}) satisfies z.ZodType<ErrorBodyShape>;
export type ErrorBody = z.infer<typeof ErrorBody>;
