import { session } from './session';

/** One event as GET /api/events frames it. */
export interface LiveEvent {
  id: string;
  ts: string;
  kind: string;
  subject: string;
  /** The API's severity of the event (eventSeverity in @vtl/api). */
  severity: 'info' | 'warning' | 'error';
  data: Record<string, unknown> & { detail?: string };
}

/** Splits an SSE byte stream into messages (the parts the API sends: id, event, data). */
export function parseFrames(buffer: string): { frames: LiveEvent[]; rest: string } {
  const frames: LiveEvent[] = [];
  const parts = buffer.split('\n\n');
  const rest = parts.pop() ?? '';
  for (const part of parts) {
    let id = '';
    let data = '';
    for (const line of part.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (!data) continue; // a comment: connected, keepalive or resynchronise
    try {
      frames.push({ id, ...(JSON.parse(data) as Omit<LiveEvent, 'id'>) });
    } catch {
      // a frame that is not JSON is not one of ours; skip it
    }
  }
  return { frames, rest };
}

/**
 * Follows the live event stream with fetch, not EventSource: EventSource cannot send the
 * Authorization header, and the token is never put in a URL. Reconnects with Last-Event-ID after
 * a drop, and tells the caller when it (re)connected so it can resynchronise from GET /api/status.
 */
export function followEvents(
  onEvent: (e: LiveEvent) => void,
  onConnected: (connected: boolean) => void,
): () => void {
  const abort = new AbortController();
  let lastId = '';
  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const token = session.get()?.token;
        if (!token) return;
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (lastId) headers['last-event-id'] = lastId;
        const res = await fetch('/api/events', { headers, signal: abort.signal });
        if (res.status === 401) return session.set(undefined);
        if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
        onConnected(true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          const { frames, rest } = parseFrames(buffer + value);
          buffer = rest;
          for (const f of frames) {
            if (f.id) lastId = f.id;
            onEvent(f);
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      onConnected(false);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  void run();
  return () => abort.abort();
}
