import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** Where relayed lines go: the child's log file and the appliance's stdout (or a terminal's pretty printer). */
export interface RelayTargets {
  file: NodeJS.WritableStream;
  out: NodeJS.WritableStream;
}

/** pino's levels: a stray stdout line is info, a stray stderr line (Node's warnings, a crash) a warning. */
const INFO = 30;
const WARN = 40;

/**
 * One log line as the appliance's stream carries it: a child's JSON line unchanged, anything
 * else (a Node warning, a stack trace of a crash, a tool's own output) wrapped into a JSON line
 * naming the process, so that a reader of the stream parses every line as one JSON object.
 */
export function asJsonLine(line: string, processName: string, fromStderr: boolean, now = Date.now()): string {
  if (line.startsWith('{') && line.endsWith('}')) {
    try {
      JSON.parse(line);
      return line;
    } catch {
      // not JSON after all: wrapped below
    }
  }
  return JSON.stringify({ level: fromStderr ? WARN : INFO, time: now, name: processName, msg: line });
}

/**
 * Copies a child's stdout and stderr to its log file and the appliance's stdout, a whole line at
 * a time (two children's lines never interleave mid-line), each line as JSON (asJsonLine). Read
 * line by line rather than piped: pipes into one shared stream add listeners to it per child and
 * per restart (Node's MaxListenersExceededWarning).
 */
export function relayLines(
  processName: string,
  streams: { stdout: Readable; stderr: Readable },
  targets: RelayTargets,
): void {
  for (const [stream, fromStderr] of [
    [streams.stdout, false],
    [streams.stderr, true],
  ] as const) {
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (raw) => {
      if (raw.trim() === '') return;
      const line = asJsonLine(raw, processName, fromStderr);
      targets.file.write(`${line}\n`);
      targets.out.write(`${line}\n`);
    });
  }
}
