import { parseCommand } from './args.js';
import { requireConfig } from './config.js';
import { CliError, UsageError } from './errors.js';
import { EXIT } from './exit.js';
import { request } from './http.js';
import { rowsOf, typeOf } from './get.js';
import { ask } from './prompt.js';
import { RESOURCE_TYPES } from './resources.js';

const KINDS = RESOURCE_TYPES.map((t) => t.plural).join('|');
export const DELETE_USAGE = `vtl delete ${KINDS} NAME [--yes]`;
export const DELETE_HELP = `Deletes one object by name: a pool that homes no library, a library (erasing its
cartridges), a cartridge (erasing its data), an initiator's registration, a remote. A job is
cancelled instead (if it has not finished).

Asks you to type the name back first; --yes skips that (scripts, CI).
`;

/** `vtl delete TYPE NAME`: after the name is typed back (or --yes), the API's delete. */
export async function remove(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    { yes: { type: 'boolean', short: 'y' } },
    DELETE_USAGE,
    'delete',
  );
  const [typed, name, extra] = positionals;
  const type = typeOf(typed, DELETE_USAGE, 'delete');
  if (name === undefined) throw new UsageError(`Name the ${type.plural} to delete.`, DELETE_USAGE, 'delete');
  if (extra !== undefined) throw new UsageError(`Unexpected argument ${extra}.`, DELETE_USAGE, 'delete');
  const config = await requireConfig();
  const [row] = await rowsOf(config, type, name);
  const what = `${type.plural}/${type.name(row)}`;
  if (!values.yes) {
    if (!process.stdin.isTTY)
      throw new UsageError(
        `Deleting ${what} needs --yes when no terminal can confirm it.`,
        DELETE_USAGE,
        'delete',
      );
    const typedBack = await ask(`Type ${type.name(row)} to delete ${what}: `);
    if (typedBack !== type.name(row))
      throw new CliError('Not confirmed; nothing was deleted.', undefined, undefined, undefined, EXIT.usage);
  }
  const req = type.remove!(row);
  await request(config, req.method ?? 'DELETE', req.path, req.body, { timeoutMs: 15 * 60_000 });
  out.write(`${what} ${req.method === 'POST' ? 'cancelled' : 'deleted'}\n`);
  return EXIT.ok;
}
