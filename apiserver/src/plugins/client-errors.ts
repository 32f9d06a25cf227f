import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { VtlError, type ErrorCode } from '@vtl/api';
import { securityHeaders } from './security-headers.js';

/** Longest request target (path and query) accepted; longer is 414. Node caps the whole head at 16 KiB. */
export const MAX_URL_LENGTH = 8 * 1024;

/** Fastify's own refusals (statusCode on its errors) as the documented codes. */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** What to do next, per refusal Fastify or Node raises. */
const ADVICE: Partial<Record<ErrorCode, string>> = {
  payload_too_large: 'The body is larger than this endpoint accepts; see the limits in docs/api.md.',
  uri_too_long: `The request target is longer than ${MAX_URL_LENGTH} bytes; send long values in a JSON body.`,
  unsupported_media_type: 'Send the body as application/json (UTF-8), or as the type the endpoint documents.',
  headers_too_large: 'The request headers exceed 16 KiB; send fewer or shorter headers.',
  method_not_allowed: 'The API uses GET, POST, PUT and DELETE; see docs/api.md for the endpoints.',
};

/** A Fastify error with a 4xx status, as the documented error body. */
export function fromFastifyError(error: FastifyError): VtlError {
  const code = CODE_FOR_STATUS[error.statusCode ?? 400] ?? 'bad_request';
  const advice = ADVICE[code] ?? 'Send a JSON body matching the API reference (docs/api.md).';
  return new VtlError(code, `${error.message.replace(/\.$/, '')}. ${advice}`);
}

/**
 * Whether the head overflowed because of its request line. `packet` is the chunk the parser
 * choked on, not the whole head: over TLS it is often the record holding the end of a long
 * target (`…aaa HTTP/1.1`), so a first line ending in the version is the request line unless it
 * is a whole, short one. A chunk with no line end at all is counted as headers.
 */
export function requestLineTooLong(packet: string): boolean {
  const end = packet.indexOf('\r\n');
  const line = end < 0 ? packet : packet.slice(0, end);
  if (line.length > MAX_URL_LENGTH && /^[A-Za-z-]+ \//.test(line)) return true;
  const endsRequestLine = / HTTP\/\d\.\d$/.test(line);
  const wholeShortLine = /^[A-Za-z-]+ \S+ HTTP\/\d\.\d$/.test(line) && line.length <= MAX_URL_LENGTH;
  return endsRequestLine && !wholeShortLine;
}

/**
 * Refusals Node's HTTP parser makes before Fastify sees a request (header block over 16 KiB,
 * a method it does not know, a malformed request line): answered on the raw socket, in the
 * documented error body with the security headers. A request line alone over the URL limit is
 * 414, not 431.
 */
export function clientErrorHandler(https: boolean) {
  // Typed loosely: Fastify's ConnectionError types rawPacket as JSON, Node passes a Buffer.
  return function onClientError(error: Error, socket: Socket) {
    const err = error as NodeJS.ErrnoException & { rawPacket?: unknown };
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // A TLS error before the handshake finished (the handshake deadline, no shared suite): no
    // HTTP answer can reach the client, and one queued on the socket would hold it open for good.
    if (err.code?.startsWith('ERR_TLS_') || err.code?.startsWith('ERR_SSL_')) {
      socket.destroy();
      return;
    }
    let refusal: VtlError;
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const packet = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : '';
      refusal = requestLineTooLong(packet)
        ? new VtlError('uri_too_long', `Request target too long. ${ADVICE.uri_too_long}`)
        : new VtlError('headers_too_large', `Request headers too large. ${ADVICE.headers_too_large}`);
    } else if (err.code === 'HPE_INVALID_METHOD') {
      refusal = new VtlError('method_not_allowed', `Unknown HTTP method. ${ADVICE.method_not_allowed}`);
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      refusal = new VtlError('bad_request', 'The request was not received in time; send it again.');
    } else {
      refusal = new VtlError('bad_request', 'Malformed HTTP request; send a well-formed HTTP/1.1 request.');
    }
    answerOnSocket(socket, refusal, https);
  };
}

/** Writes the error body as a whole HTTP response on a socket Fastify does not handle, then closes it. */
function answerOnSocket(socket: Duplex, refusal: VtlError, https: boolean): void {
  if (socket.writable) {
    const body = JSON.stringify(refusal.toBody());
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      connection: 'close',
      ...securityHeaders(https),
    };
    const head = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    // Destroyed once flushed: the parser's state is unusable, so the connection does not go on.
    socket.end(`HTTP/1.1 ${refusal.status} ${statusText(refusal.status)}\r\n${head}\r\n${body}`, () =>
      socket.destroy(),
    );
  } else socket.destroy();
}

/** CONNECT never reaches Fastify (Node emits 'connect' and drops the socket without a listener). */
export function refuseConnect(server: Server, https: boolean): void {
  server.on('connect', (_req: unknown, socket: Duplex) =>
    answerOnSocket(
      socket,
      new VtlError('method_not_allowed', `CONNECT is not supported. ${ADVICE.method_not_allowed}`),
      https,
    ),
  );
}

const statusText = (status: number) =>
  ({
    400: 'Bad Request',
    405: 'Method Not Allowed',
    414: 'URI Too Long',
    431: 'Request Header Fields Too Large',
  })[status] ?? 'Error';

/** Router-level refusals (a path parameter over maxParamLength, an undecodable URL). */
export function frameworkErrors(https: boolean) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    const vtl = fromFastifyError(error);
    void reply
      .headers({ ...securityHeaders(https), 'cache-control': 'no-store' })
      .status(vtl.status)
      .send(vtl.toBody());
  };
}

/** 414 for a request target over MAX_URL_LENGTH that still fit in Node's 16 KiB head. */
export function registerUrlLimit(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.raw.url && request.raw.url.length > MAX_URL_LENGTH)
      throw new VtlError('uri_too_long', `Request target too long. ${ADVICE.uri_too_long}`);
  });
}
