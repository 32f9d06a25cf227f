import type { ServerResponse } from 'node:http';

/** A kept part this large goes to the socket in a write of its own (writeBody). */
export const OWN_WRITE_BYTES = 64 * 1024;

/**
 * A view's answer after writeHead. Node's TLS socket copies a write of several buffers into one
 * new allocation before encrypting it (TLSWrap::DoWrite), and a response's header is always a
 * buffer of its own: the 16-library status view (2.4 MB) then cost a 2.4 MB allocation, copy
 * and the page faults of fresh memory per request, where the bytes are kept to be sent as they
 * are. So each large part (the status view's libraries and cartridge list, a one-part view) goes
 * to the socket alone, encrypted from where it is kept, and the small chunks between them (the
 * header, the `updated_at` head, the status view's small parts) together: one more TLS record
 * per large part. Small answers go in one write, as before (one record).
 *
 * A write is handed to the socket only once the one before it is done (its callback): writes
 * made while one is in flight wait in the socket's buffer, and the socket then sends all that
 * waits there as one `writev`, the copy again. Each write is uncorked at once for the same reason
 * (`res.write` corks the socket until the turn ends).
 */
export function writeBody(res: ServerResponse, chunks: readonly Buffer[]): void {
  const groups: Buffer[][] = [];
  let run: Buffer[] = [];
  for (const c of chunks) {
    if (c.length < OWN_WRITE_BYTES) run.push(c);
    else {
      if (run.length > 0) groups.push(run);
      groups.push([c]);
      run = [];
    }
  }
  if (run.length > 0 || groups.length === 0) groups.push(run);
  // A large first part: the header goes alone before it.
  if ((groups[0]![0]?.length ?? 0) >= OWN_WRITE_BYTES) res.flushHeaders();
  const send = (i: number): void => {
    const group = groups[i]!;
    for (let j = 0; j < group.length - 1; j++) res.write(group[j]);
    if (i === groups.length - 1) {
      res.end(group.at(-1));
      return;
    }
    res.write(group.at(-1)!, (err) => {
      if (!err && !res.destroyed) send(i + 1);
    });
    res.socket?.uncork();
  };
  send(0);
}
