import { stringify } from 'yaml';
import { parseCommand } from './args.js';
import { requireConfig } from './config.js';
import { UsageError } from './errors.js';
import { EXIT } from './exit.js';
import { request } from './http.js';
import { loadNames } from './names.js';
import { rowsOf, typeOf } from './get.js';
import { RESOURCE_TYPES, type Row } from './resources.js';

const KINDS = RESOURCE_TYPES.map((t) => t.plural).join('|');
export const DESCRIBE_USAGE = `vtl describe ${KINDS} NAME`;
export const DESCRIBE_HELP = `Shows one object in full, with names where it refers to others by id, then what else the
appliance says about it: a library's lifecycle conditions, a cartridge's jobs, and the newest
events that name it.
`;

const EVENTS_SHOWN = 10;

/** `vtl describe TYPE NAME`: every field, the related objects by name, conditions and events. */
export async function describe(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { positionals } = parseCommand(argv, {}, DESCRIBE_USAGE, 'describe');
  const [typed, name, extra] = positionals;
  const type = typeOf(typed, DESCRIBE_USAGE, 'describe');
  if (name === undefined)
    throw new UsageError(`Name the ${type.plural} to describe.`, DESCRIBE_USAGE, 'describe');
  if (extra !== undefined) throw new UsageError(`Unexpected argument ${extra}.`, DESCRIBE_USAGE, 'describe');
  const config = await requireConfig();
  const [row] = (await rowsOf(config, type, name)) as [Row];
  const names = await loadNames(config);
  const shown: Row = { ...row };
  // References by name beside the id an API client needs.
  if (typeof row.library === 'number') shown.library = `${names.library(row.library)} (id ${row.library})`;
  if (typeof row.home_pool === 'number')
    shown.home_pool = `${names.pool(row.home_pool)} (id ${row.home_pool})`;
  if (typeof row.remote_id === 'number' && row.remote_id > 0)
    shown.remote_id = `${names.remote(row.remote_id)} (id ${row.remote_id})`;
  out.write(`${type.plural}/${type.name(row)}\n`);
  out.write(stringify(shown));

  if (type.plural === 'libraries') {
    const status = (await request(config, 'GET', `/api/libraries/${row.id}/status`)).body;
    out.write(`\nPhase: ${status.phase}\nConditions:\n`);
    for (const c of status.conditions ?? [])
      out.write(`  ${c.type}=${c.status}  ${c.reason}${c.message ? `: ${c.message}` : ''}\n`);
  }
  if (type.plural === 'cartridges') {
    const jobs = ((await request(config, 'GET', '/api/jobs?limit=200')).body as Row[]).filter(
      (j) => j.label === row.label,
    );
    out.write(`\nJobs:${jobs.length ? '' : ' none'}\n`);
    for (const j of jobs) out.write(`  #${j.id} ${j.kind} ${j.state}${j.error ? `: ${j.error}` : ''}\n`);
  }
  const subject = type.plural === 'jobs' ? `job:${row.id}` : type.name(row);
  const query = new URLSearchParams({ q: subject, limit: String(EVENTS_SHOWN) });
  const events = (await request(config, 'GET', `/api/events/search?${query}`)).body as Row[];
  out.write(`\nEvents:${events.length ? '' : ' none'}\n`);
  for (const e of events.reverse()) out.write(`  ${e.ts}  ${e.severity}  ${e.kind}  ${e.detail}\n`);
  return EXIT.ok;
}
