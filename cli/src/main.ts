#!/usr/bin/env node
import { CliError } from './errors.js';
import { get, GET_USAGE } from './get.js';
import { login, LOGIN_USAGE } from './login.js';
import { apply, APPLY_USAGE, diff, DIFF_EXIT, DIFF_USAGE } from './plan.js';

const HELP = `vtl: the tape library appliance from the command line.

  ${LOGIN_USAGE}
      Log in with a user's password or an API key (typed at a hidden prompt or piped on
      standard input); saved in $VTL_CONFIG or ~/.config/vtl/config.json (mode 0600).
  ${GET_USAGE}
  ${DIFF_USAGE}
      Show what applying the manifests would change. Exit 0: no changes, 1: changes, 2: error.
  ${APPLY_USAGE}
      Apply the manifests, all or nothing. --prune removes objects this source made that the
      manifests no longer declare.
`;

/** Runs one command; resolves with the process's exit code. */
export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const out = process.stdout;
  const err = process.stderr;
  try {
    switch (command) {
      case 'login':
        return await login(rest, out);
      case 'get':
        return await get(rest, out, err);
      case 'diff':
        return await diff(rest, out);
      case 'apply':
        return await apply(rest, out);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out.write(HELP);
        return command === undefined ? 1 : 0;
      default:
        err.write(`error: unknown command "${command}".\n${HELP}`);
        return 1;
    }
  } catch (e) {
    const failure =
      e instanceof CliError
        ? e
        : // parseArgs raises TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed options.
          (e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')
          ? new CliError((e as Error).message, 'Run `vtl help` for every command and option.')
          : new CliError(
              `Unexpected failure: ${(e as Error).message}`,
              'Please report this with the command you ran.',
            );
    err.write(`error: ${failure.message}\n`);
    if (failure.hint) err.write(`${failure.hint}\n`);
    return command === 'diff' ? DIFF_EXIT.error : 1;
  }
}

process.exitCode = await run(process.argv.slice(2));
