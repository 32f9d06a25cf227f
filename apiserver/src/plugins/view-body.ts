import type { ServerResponse } from 'node:http';

/** A kept part this large goes to the socket in a write of its own (writeBody). */
export const OWN_WRITE_BYTES = 64 * 1024;

/**
 * A view's answer after writeHead. Node's TLS socket copies a write of several buffers into one
 * new allocation before encrypting it (TLSWrap::DoWrite), and a response's header is always a
 * buffer of its own: the 16-library status view (2.4 MB) then cost a 2.4 MB allocation, copy
 * and the page faults of fresh memory per request, where the bytes are kept to be sent as they
 * are. So when the last part is large, what comes before it (the header, the status view's
 * `updated_at` head) is sent first and the kept part then alone, encrypted from where it is
 * kept: one more TLS record per answer. Small answers go in one write, as before (one record).
 */
export function writeBody(res: ServerResponse, chunks: readonly Buffer[]): void {
  const last = chunks.at(-1) ?? Buffer.alloc(0);
  if (last.length >= OWN_WRITE_BYTES) {
    if (chunks.length === 1) res.flushHeaders();
    else {
      for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
      // res.write corked the socket until the turn ends: sent now, without the kept part.
      res.socket?.uncork();
    }
  } else for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
  res.end(last);
}
