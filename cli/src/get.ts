import { requireConfig } from './config.js';
import { notFound, UsageError } from './errors.js';
import { request, type Connection } from './http.js';
import { parseCommand } from './args.js';
import { RESOURCE_TYPES, resourceType, type ResourceType, type Row } from './resources.js';
import { loadNames } from './names.js';
import { yamlOf } from './manifest-out.js';
import { renderTable } from './table.js';
import { EXIT } from './exit.js';

const KINDS = RESOURCE_TYPES.map((t) => t.plural).join('|');
export const GET_USAGE = `vtl get ${KINDS} [NAME] [-o json|yaml|wide|name] [--watch]`;
export const GET_HELP = `Lists objects as a table, or one by NAME (its name, or its id where it has one).
Libraries, pools and remotes are shown by name where rows refer to them.

Options:
  -o, --output FORMAT   json, yaml, wide or name. yaml of pools, libraries, initiators and
                        remotes is the manifests \`vtl apply -f\` takes back (a remote's
                        secretRef names a secret to register: the key is never shown).
  -w, --watch           Keep listing: print the rows that change, every 2 s, until interrupted.
`;

const OUTPUTS = ['table', 'wide', 'json', 'yaml', 'name'];
const WATCH_EVERY_MS = 2000;

/** The type a user typed, or a usage error listing what exists. */
export function typeOf(typed: string | undefined, usage: string, command: string): ResourceType {
  if (!typed) throw new UsageError('Name what kind of object.', usage, command);
  const type = resourceType(typed);
  if (!type) throw new UsageError(`Unknown kind "${typed}": one of ${KINDS}.`, usage, command);
  return type;
}

/** The rows of a type, or the one NAME names (a not-found error says how to list them). */
export async function rowsOf(conn: Connection, type: ResourceType, name?: string): Promise<Row[]> {
  const rows = type.rows((await request(conn, 'GET', type.path)).body);
  if (name === undefined) return rows;
  const found = rows.filter((r) => type.matches(r, name));
  if (found.length === 0)
    throw notFound(
      `${type.plural} "${name}" not found.`,
      `Run \`vtl get ${type.plural}\` to see what exists.`,
    );
  return found.slice(0, 1);
}

/** `vtl get TYPE [NAME]`: a table of rows (or one row), JSON, YAML manifests or names. */
export async function get(
  argv: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    { output: { type: 'string', short: 'o' }, watch: { type: 'boolean', short: 'w' } },
    GET_USAGE,
    'get',
  );
  const [typed, name, extra] = positionals;
  const type = typeOf(typed, GET_USAGE, 'get');
  if (extra !== undefined) throw new UsageError(`Unexpected argument ${extra}.`, GET_USAGE, 'get');
  const output = values.output ?? 'table';
  if (!OUTPUTS.includes(output))
    throw new UsageError(
      `Unknown output format "${output}": one of json, yaml, wide, name.`,
      GET_USAGE,
      'get',
    );
  if (values.watch && output !== 'table' && output !== 'wide')
    throw new UsageError('--watch prints tables: leave out -o, or use -o wide.', GET_USAGE, 'get');

  const config = await requireConfig();
  const rows = await rowsOf(config, type, name);
  const names = await loadNames(config);
  const one = name !== undefined;
  if (output === 'json') out.write(JSON.stringify(one ? rows[0] : rows, null, 2) + '\n');
  else if (output === 'yaml') out.write(yamlOf(type, rows, names, one));
  else if (output === 'name') out.write(rows.map((r) => `${type.plural}/${type.name(r)}\n`).join(''));
  else if (rows.length === 0 && !values.watch) err.write(`No ${type.plural} found.\n`);
  else out.write(renderTable(rows, type.columns(names), output === 'wide'));
  if (!values.watch) return EXIT.ok;
  return watch(config, type, name, output === 'wide', out);
}

/**
 * Polls the listing and prints each row whose cells changed since it was last printed (as
 * `kubectl get -w` does, without repeating the header); runs until the process is interrupted.
 */
async function watch(
  conn: Connection,
  type: ResourceType,
  name: string | undefined,
  wide: boolean,
  out: NodeJS.WritableStream,
): Promise<never> {
  const seen = new Map<string, string>();
  /** Each row's name, its printed line, and what it says apart from its age (which always moves). */
  const read = async () => {
    const columns = type.columns(await loadNames(conn));
    const rows = await rowsOf(conn, type, name).catch(() => [] as Row[]);
    const lines = renderTable(rows, columns, wide).trimEnd().split('\n').slice(1);
    const still = columns.filter((c) => c.header !== 'AGE' && c.header !== 'MODIFIED');
    return rows.map((r, i) => ({
      key: type.name(r),
      line: lines[i] ?? '',
      says: JSON.stringify(still.map((c) => c.cell(r))),
    }));
  };
  for (const row of await read()) seen.set(row.key, row.says);
  for (;;) {
    await new Promise((r) => setTimeout(r, WATCH_EVERY_MS));
    for (const row of await read())
      if (seen.get(row.key) !== row.says) {
        seen.set(row.key, row.says);
        out.write(`${row.line}\n`);
      }
  }
}
