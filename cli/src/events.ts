import { parseCommand } from './args.js';
import { requireConfig } from './config.js';
import { UsageError } from './errors.js';
import { EXIT } from './exit.js';
import { followEvents } from './event-stream.js';
import { request } from './http.js';

export const EVENTS_USAGE = 'vtl events [--kind KIND] [--severity LEVEL] [--limit N] [--all] [--follow]';
export const EVENTS_HELP = `Prints the newest events of the journal, oldest first: time, severity, kind, subject, detail.
Periodic figures (pool_stats, drive_activity) are left out unless --all or --kind asks for them.

Options:
  --kind KIND         Only events of this kind (e.g. cart_minted, job_update, maint_done).
  --severity LEVEL    Only events of this severity or worse: info, warning or error.
  --limit N           How many of the newest (default 50).
  --all               Include the periodic figures.
  -f, --follow        Then print new events as they happen, until interrupted.
`;

const PERIODIC = new Set(['pool_stats', 'drive_activity']);

/** The API's severities (docs/api.md "Event severity"), least to most urgent. */
const SEVERITIES = ['info', 'warning', 'error'];

interface EventLine {
  ts: string;
  severity: string;
  kind: string;
  subject: string;
  detail: string;
}

const line = (e: EventLine) =>
  `${e.ts}  ${e.severity.padEnd(7)} ${e.kind.padEnd(16)} ${e.subject.padEnd(20)} ${e.detail}\n`;

/** `vtl events`: the journal's newest events, and with --follow the live stream after them. */
export async function events(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    {
      kind: { type: 'string' },
      severity: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      follow: { type: 'boolean', short: 'f' },
    },
    EVENTS_USAGE,
    'events',
  );
  if (positionals.length > 0)
    throw new UsageError(`Unexpected argument ${positionals[0]}.`, EVENTS_USAGE, 'events');
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(
      `--limit ${values.limit} is not a whole number of at least 1.`,
      EVENTS_USAGE,
      'events',
    );
  const least = values.severity === undefined ? 0 : SEVERITIES.indexOf(values.severity);
  if (least < 0)
    throw new UsageError(
      `--severity ${values.severity} is not one of ${SEVERITIES.join(', ')}.`,
      EVENTS_USAGE,
      'events',
    );
  const wanted = (e: { kind: string; severity: string }) =>
    SEVERITIES.indexOf(e.severity) >= least &&
    (values.kind ? e.kind === values.kind : values.all || !PERIODIC.has(e.kind));
  const config = await requireConfig();
  const query = new URLSearchParams({
    limit: String(values.kind || (values.all && !least) ? limit : Math.min(10_000, limit * 20)),
  });
  if (values.kind) query.set('kind', values.kind);
  const newest = (await request(config, 'GET', `/api/events/search?${query}`)).body as EventLine[];
  for (const e of newest.filter(wanted).slice(0, limit).reverse()) out.write(line(e));
  if (!values.follow) return EXIT.ok;
  return followEvents(config, (e) => {
    if (wanted(e)) out.write(line({ ...e, detail: String(e.data.detail ?? '') }));
  });
}
