import { EXIT, type ExitCode } from './exit.js';

/**
 * A failure the CLI reports and exits with: `message` says what happened, `hint` what to do
 * next. Never carries a credential.
 */
export class CliError extends Error {
  readonly code = 'VTL_CLI_ERROR';
  constructor(
    message: string,
    readonly hint?: string,
    /** Set when the appliance answered with an error body. */
    readonly status?: number,
    readonly details?: unknown,
    /** The exit code, when the status alone does not say it (see exitCodeOf). */
    readonly exit?: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Usage mistakes: the message and the command's usage line. */
export class UsageError extends CliError {
  constructor(message: string, usage: string, command?: string) {
    super(
      message,
      `Usage: ${usage}\nRun \`vtl ${command ? `${command} ` : ''}--help\` for more.`,
      undefined,
      undefined,
      EXIT.usage,
    );
    this.name = 'UsageError';
  }
}

/** A named object that does not exist. */
export const notFound = (message: string, hint: string) =>
  new CliError(message, hint, undefined, undefined, EXIT.refused);

/**
 * The exit code of a failure: its own when set, else by the appliance's answer (401 and 5xx:
 * unavailable; other 4xx: refused), else unavailable (no answer: not logged in, unreachable).
 */
export function exitCodeOf(err: CliError): ExitCode {
  if (err.exit !== undefined) return err.exit;
  if (err.status === undefined || err.status === 401 || err.status >= 500) return EXIT.unavailable;
  return EXIT.refused;
}
