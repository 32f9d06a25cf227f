import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.gen';
import { session } from './session';

export type { paths };
export type ErrorBody = components['schemas']['ErrorBody'];

/** A refusal or failure as the API worded it: the console shows `message` verbatim. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.get()?.token;
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response, request }) {
    // An expired or revoked session: back to the login page (but not for the login itself).
    if (response.status === 401 && !request.url.endsWith('/api/auth/login')) session.set(undefined);
    return response;
  },
};

/** The typed client: paths, bodies and answers come from the apiserver's OpenAPI document. */
export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** The data of an openapi-fetch answer, or an ApiError carrying the API's own message. */
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (response.ok) return data as T;
  const body = error as Partial<ErrorBody> | undefined;
  throw new ApiError(
    response.status,
    body?.error?.code ?? 'internal',
    body?.error?.message ?? `${response.status} ${response.statusText}`,
  );
}

/** A message for anything thrown: the API's words when it answered, else what went wrong. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return `The appliance did not answer: ${err.message}`;
  return String(err);
}
