import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { badRequest, notFound } from '@vtl/api';
import { validationError } from './errors.js';

/** Parses input with a zod schema; a failure is a 400 with the one error body. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) throw validationError(result.error);
  return result.data;
}

/**
 * For a route with `attachValidation: true`: throws its schema's 400 (the ZodError, answered as
 * the one error body) at the point the handler chooses, after the refusals that come first.
 */
export function validInput(request: FastifyRequest): void {
  if (request.validationError) throw request.validationError;
}

/** Parses a numeric id in the path (`{lib}`, `{id}`); anything else names no resource. */
export function idParam(value: string, what: string): number {
  if (!/^\d{1,9}$/.test(value)) throw notFound(`No ${what} "${value}": ids are positive integers.`);
  return Number.parseInt(value, 10);
}

/** Parses a non-negative integer in the path (drive `{index}`). */
export function indexParam(value: string, what: string): number {
  if (!/^\d{1,4}$/.test(value)) throw badRequest(`${what} must be a non-negative integer, got "${value}".`);
  return Number.parseInt(value, 10);
}
