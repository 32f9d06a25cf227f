import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

/**
 * Runs a command's parseArgs and says its errors plainly, with the command's usage: "Unknown
 * option --colour." rather than Node's advice about `--` and positionals.
 */
export function withUsage<R>(parse: () => R, usage: string, command: string): R {
  try {
    return parse();
  } catch (err) {
    const message = (err as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(message);
    const missing = /Option '([^']+)' argument missing/.exec(message);
    const typed = /Option '([^']+)' does not take an argument/.exec(message);
    const plain = unknown
      ? `Unknown option ${unknown[1]}.`
      : missing
        ? `Option ${missing[1]} needs a value.`
        : typed
          ? `Option ${typed[1]} takes no value.`
          : `${message.split('.')[0]}.`;
    throw new UsageError(plain, usage, command);
  }
}

/** A command's options and positionals (parseArgs), its mistakes said with its usage (withUsage). */
export function parseCommand<O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  usage: string,
  command: string,
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>> {
  return withUsage(() => parseArgs({ args: argv, allowPositionals: true, options }), usage, command);
}
