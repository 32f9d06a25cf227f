#!/usr/bin/env node
import { activate, ACTIVATE_HELP, ACTIVATE_USAGE } from './activate.js';
import { completion, COMPLETION_HELP, COMPLETION_USAGE } from './completion.js';
import { describe, DESCRIBE_HELP, DESCRIBE_USAGE } from './describe.js';
import { remove, DELETE_HELP, DELETE_USAGE } from './delete.js';
import { CliError, UsageError, exitCodeOf } from './errors.js';
import { events, EVENTS_HELP, EVENTS_USAGE } from './events.js';
import { EXIT } from './exit.js';
import { get, GET_HELP, GET_USAGE } from './get.js';
import { login, LOGIN_HELP, LOGIN_USAGE } from './login.js';
import { apply, APPLY_HELP, APPLY_USAGE, diff, DIFF_HELP, DIFF_USAGE } from './plan.js';
import { version, VERSION_HELP, VERSION_USAGE } from './version.js';

const out = process.stdout;
const err = process.stderr;

interface Command {
  usage: string;
  /** One line for `vtl help`. */
  summary: string;
  help: string;
  /** Its options, for shell completion. */
  options: string[];
  run: (argv: string[]) => Promise<number> | number;
}

const COMMANDS: Record<string, Command> = {
  login: {
    usage: LOGIN_USAGE,
    summary: 'Log in with a password or an API key; saved for the other commands.',
    help: LOGIN_HELP,
    options: ['--server', '--insecure', '--ca', '--username', '--api-key'],
    run: (a) => login(a, out),
  },
  get: {
    usage: GET_USAGE,
    summary: 'List objects, or show one, as a table, JSON, YAML manifests or names.',
    help: GET_HELP,
    options: ['--output', '--watch'],
    run: (a) => get(a, out, err),
  },
  describe: {
    usage: DESCRIBE_USAGE,
    summary: 'Show one object in full, with its conditions, jobs and events.',
    help: DESCRIBE_HELP,
    options: [],
    run: (a) => describe(a, out),
  },
  delete: {
    usage: DELETE_USAGE,
    summary: 'Delete one object by name (a job is cancelled).',
    help: DELETE_HELP,
    options: ['--yes'],
    run: (a) => remove(a, out),
  },
  activate: {
    usage: ACTIVATE_USAGE,
    summary: 'Activate the declared libraries (restarts the data plane).',
    help: ACTIVATE_HELP,
    options: [],
    run: (a) => activate(a, out),
  },
  events: {
    usage: EVENTS_USAGE,
    summary: "Print the journal's newest events; --follow for new ones.",
    help: EVENTS_HELP,
    options: ['--kind', '--limit', '--all', '--follow'],
    run: (a) => events(a, out),
  },
  jobs: {
    usage: 'vtl jobs [--watch]',
    summary: 'List jobs (vtl get jobs); --watch for their progress.',
    help: GET_HELP,
    options: ['--output', '--watch'],
    run: (a) => get(['jobs', ...a], out, err),
  },
  diff: {
    usage: DIFF_USAGE,
    summary: 'Show what applying manifests would change.',
    help: DIFF_HELP,
    options: ['--filename', '--prune', '--source'],
    run: (a) => diff(a, out),
  },
  apply: {
    usage: APPLY_USAGE,
    summary: 'Apply manifests, all or nothing.',
    help: APPLY_HELP,
    options: ['--filename', '--prune', '--source'],
    run: (a) => apply(a, out),
  },
  version: {
    usage: VERSION_USAGE,
    summary: 'Print the versions of vtl and the appliance.',
    help: VERSION_HELP,
    options: [],
    run: () => version(out, err),
  },
  completion: {
    usage: COMPLETION_USAGE,
    summary: 'Print the bash completion script.',
    help: COMPLETION_HELP,
    options: [],
    run: (a) =>
      completion(a, Object.fromEntries(Object.entries(COMMANDS).map(([name, c]) => [name, c.options])), out),
  },
};

const HELP = `vtl: the tape library appliance from the command line.

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(11)} ${c.summary}`)
  .join('\n')}
  help        Help for a command (or vtl COMMAND --help).

Exit codes (the same for every command):
  0  done (diff: nothing would change)     1  diff: something would change
  2  the command line is wrong             3  invalid manifests or a refused change
  4  the appliance refused, or no such object
  5  not logged in, credential not accepted, appliance unreachable or failing
  6  a failure of vtl itself
`;

const commandHelp = (name: string, c: Command) => `Usage: ${c.usage}\n\n${c.help}`;

/** Runs one command; resolves with the process's exit code (see HELP). */
export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h') {
      out.write(HELP);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === '--version') return await version(out, err);
    if (name === 'help') {
      const c = rest[0] === undefined ? undefined : COMMANDS[rest[0]];
      if (rest[0] !== undefined && !c)
        throw new UsageError(`Unknown command "${rest[0]}".`, 'vtl help [COMMAND]');
      out.write(c ? commandHelp(rest[0]!, c) : HELP);
      return EXIT.ok;
    }
    const command = COMMANDS[name];
    if (!command)
      throw new UsageError(`Unknown command "${name}".`, `vtl ${Object.keys(COMMANDS).join('|')} ...`);
    if (rest.includes('--help') || rest.includes('-h')) {
      out.write(commandHelp(name, command));
      return EXIT.ok;
    }
    return await command.run(rest);
  } catch (e) {
    const failure =
      e instanceof CliError
        ? e
        : new CliError(
            `Unexpected failure: ${(e as Error).message}`,
            'Please report this with the command you ran.',
            undefined,
            undefined,
            EXIT.internal,
          );
    err.write(`error: ${failure.message}\n`);
    if (failure.hint) err.write(`${failure.hint}\n`);
    return exitCodeOf(failure);
  }
}

process.exitCode = await run(process.argv.slice(2));
