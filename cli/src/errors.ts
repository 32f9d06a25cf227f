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
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Usage mistakes: the message and the command's usage line. */
export class UsageError extends CliError {
  constructor(message: string, usage: string) {
    super(message, `Usage: ${usage}\nRun \`vtl help\` for every command.`);
    this.name = 'UsageError';
  }
}
