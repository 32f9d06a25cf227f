import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { CliError } from './errors.js';
import type { Connection } from './http.js';

/** One event of GET /api/events (docs/api.md "Event stream"). */
export interface StreamEvent {
  id: string;
  ts: string;
  kind: string;
  /** info, warning or error (docs/api.md "Event severity"). */
  severity: string;
  subject: string;
  data: { detail?: string } & Record<string, unknown>;
}

/** Splits SSE text into events (id and data lines), keeping a partial frame for the next chunk. */
export function parseFrames(buffer: string): { events: StreamEvent[]; rest: string } {
  const parts = buffer.split('\n\n');
  const rest = parts.pop() ?? '';
  const events: StreamEvent[] = [];
  for (const part of parts) {
    let id = '';
    let data = '';
    for (const line of part.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (!data) continue; // a comment: connected, keepalive, resynchronise
    try {
      events.push({ id, ...(JSON.parse(data) as Omit<StreamEvent, 'id'>) });
    } catch {
      // not one of the appliance's frames: skipped
    }
  }
  return { events, rest };
}

/**
 * Follows the event stream until the process ends, reconnecting after a drop with
 * Last-Event-ID (so nothing in between is missed while the journal holds it).
 */
export async function followEvents(conn: Connection, onEvent: (e: StreamEvent) => void): Promise<never> {
  let lastId = '';
  for (;;) {
    await new Promise<void>((resolve, reject) => {
      const url = new URL('/api/events', conn.server);
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (conn.token) headers.authorization = `Bearer ${conn.token}`;
      if (lastId) headers['last-event-id'] = lastId;
      const secure = url.protocol === 'https:';
      const tls = secure
        ? { rejectUnauthorized: !conn.insecure, ...(conn.caFile ? { ca: fs.readFileSync(conn.caFile) } : {}) }
        : {};
      const req = (secure ? https : http).get(url, { headers, ...tls }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(
            new CliError(
              `The event stream answered ${res.statusCode}.`,
              res.statusCode === 401 ? 'Run `vtl login` again.' : undefined,
              res.statusCode,
            ),
          );
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const { events, rest } = parseFrames(buffer + chunk);
          buffer = rest;
          for (const e of events) {
            if (e.id) lastId = e.id;
            onEvent(e);
          }
        });
        res.on('end', resolve);
        res.on('error', resolve);
      });
      req.on('error', (err) =>
        reject(
          new CliError(`The event stream of ${conn.server} failed: ${err.message}`, 'Check the network.'),
        ),
      );
    });
    await new Promise((r) => setTimeout(r, 1000));
  }
}
