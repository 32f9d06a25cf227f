import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { requireConfig } from './config.js';
import { CliError, UsageError } from './errors.js';
import { request } from './http.js';
import { RESOURCE_TYPES, resourceType } from './resources.js';
import { renderTable } from './table.js';

export const GET_USAGE = `vtl get ${RESOURCE_TYPES.map((t) => t.plural).join('|')} [NAME] [-o json|yaml|wide]`;

/** `vtl get TYPE [NAME]`: a table of rows (or one row), or the rows as JSON or YAML. */
export async function get(
  argv: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' } },
  });
  const [typed, name, extra] = positionals;
  if (!typed) throw new UsageError('Name what to list.', GET_USAGE);
  if (extra !== undefined) throw new UsageError(`Unexpected argument ${extra}.`, GET_USAGE);
  const type = resourceType(typed);
  if (!type) throw new UsageError(`Unknown resource type "${typed}".`, GET_USAGE);
  const output = values.output ?? 'table';
  if (!['table', 'wide', 'json', 'yaml'].includes(output))
    throw new UsageError(`Unknown output format "${output}".`, GET_USAGE);

  const config = await requireConfig();
  const res = await request(config, 'GET', type.path);
  let rows = type.rows(res.body);
  if (name !== undefined) {
    rows = rows.filter((r) => type.matches(r, name));
    if (rows.length === 0)
      throw new CliError(
        `${type.plural} "${name}" not found.`,
        `Run \`vtl get ${type.plural}\` to see what exists.`,
      );
  }
  // One named object prints as itself, a listing as a list (as kubectl does).
  const data = name !== undefined ? rows[0] : rows;
  if (output === 'json') out.write(JSON.stringify(data, null, 2) + '\n');
  else if (output === 'yaml') out.write(stringify(data));
  else if (rows.length === 0) err.write(`No ${type.plural} found.\n`);
  else out.write(renderTable(rows, type.columns, output === 'wide'));
  return 0;
}
