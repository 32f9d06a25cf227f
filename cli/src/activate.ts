import { parseCommand } from './args.js';
import { requireConfig } from './config.js';
import { UsageError } from './errors.js';
import { EXIT } from './exit.js';
import { request } from './http.js';

export const ACTIVATE_USAGE = 'vtl activate';
export const ACTIVATE_HELP = `Activates the declared libraries (POST /api/libraries/apply): the data plane restarts to
serve them, so hosts see their sessions drop briefly. Refused while a drive holds a cartridge.
Prints the steps the appliance took.
`;

/** The time an activation may take: a data-plane restart with every library. */
const ACTIVATE_TIMEOUT_MS = 15 * 60_000;

export async function activate(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { positionals } = parseCommand(argv, {}, ACTIVATE_USAGE, 'activate');
  if (positionals.length > 0)
    throw new UsageError(`Unexpected argument ${positionals[0]}.`, ACTIVATE_USAGE, 'activate');
  const config = await requireConfig();
  const res = await request(
    config,
    'POST',
    '/api/libraries/apply',
    { confirm: 'apply' },
    {
      timeoutMs: ACTIVATE_TIMEOUT_MS,
    },
  );
  for (const step of (res.body.steps ?? []) as string[]) out.write(`${step}\n`);
  out.write('Activated the declared libraries.\n');
  return EXIT.ok;
}
