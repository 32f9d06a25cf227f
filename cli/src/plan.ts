import { requireConfig } from './config.js';
import { CliError, UsageError } from './errors.js';
import { parseCommand } from './args.js';
import { EXIT } from './exit.js';
import { request } from './http.js';
import { readManifests } from './manifests.js';
import { formatApplied, formatErrors, formatPlan, type Applied, type Plan } from './plan-format.js';

export const DIFF_USAGE = 'vtl diff -f DIR [--prune] [--source NAME]';
export const APPLY_USAGE = 'vtl apply -f DIR [--prune] [--source NAME]';

const OPTIONS = `
Options:
  -f, --filename DIR   A directory of manifests (every *.yaml and *.yml under it) or one file.
  --prune              Also remove what this source made that the manifests no longer declare.
  --source NAME        The source the objects are recorded under (default: cli).

Every problem of the set is reported at once, as FILE:LINE: Kind/name field: message.
`;
export const DIFF_HELP = `Shows what applying the manifests would change (POST /api/gitops/plan); changes nothing.
Exit 0 when nothing would change, 1 when something would, 3 when the set is invalid or a
change would be refused.
${OPTIONS}`;
export const APPLY_HELP = `Applies the manifests, all or nothing (POST /api/gitops/apply). Exit 0 when everything
declared is applied, 3 when the set is invalid or a change is refused (nothing is changed).
${OPTIONS}`;

/** Activation of a library restarts the data plane: give apply the time an activation takes. */
const APPLY_TIMEOUT_MS = 15 * 60_000;

async function body(argv: string[], usage: string) {
  const command = usage.split(' ')[1] ?? '';
  const { values, positionals } = parseCommand(
    argv,
    {
      filename: { type: 'string', short: 'f' },
      prune: { type: 'boolean' },
      source: { type: 'string' },
    },
    usage,
    command,
  );
  if (positionals.length > 0) throw new UsageError(`Unexpected argument ${positionals[0]}.`, usage, command);
  if (!values.filename)
    throw new UsageError('Pass -f DIR (a directory of manifests or one file).', usage, command);
  const documents = await readManifests(values.filename);
  return {
    ...(values.source ? { source: values.source } : {}),
    documents,
    ...(values.prune ? { prune: true } : {}),
  };
}

/**
 * `vtl diff -f DIR`: POST /api/gitops/plan and print the plan. Exit 0 when nothing would
 * change, 1 when something would, 3 on invalid manifests or a refused change (as apply).
 */
export async function diff(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const config = await requireConfig();
  const plan = (await request(config, 'POST', '/api/gitops/plan', await body(argv, DIFF_USAGE))).body as Plan;
  out.write(formatPlan(plan));
  if (!plan.valid || plan.actions.some((a) => a.action === 'refused')) return EXIT.invalid;
  return plan.actions.some((a) => a.action !== 'unchanged') ? EXIT.changes : EXIT.ok;
}

/**
 * `vtl apply -f DIR`: POST /api/gitops/apply (all or nothing) and print what changed. Exit 0
 * when everything declared is applied, 3 when the set is invalid or a change was refused.
 */
export async function apply(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const config = await requireConfig();
  const req = await body(argv, APPLY_USAGE);
  let plan: Applied;
  try {
    plan = (await request(config, 'POST', '/api/gitops/apply', req, { timeoutMs: APPLY_TIMEOUT_MS }))
      .body as Applied;
  } catch (err) {
    // An invalid set is 400 with the errors in the details: name every file and field.
    const details = err instanceof CliError ? (err.details as { errors?: unknown } | undefined) : undefined;
    if (err instanceof CliError && err.status === 400 && Array.isArray(details?.errors))
      throw new CliError(
        `${err.message}\n${formatErrors(details.errors).trimEnd()}`,
        'Nothing was changed. Fix these files, check with `vtl diff -f DIR`, then apply again.',
        400,
        details,
        EXIT.invalid,
      );
    throw err;
  }
  out.write(formatApplied(plan));
  if (!plan.valid) {
    out.write(`The manifests are invalid; nothing was changed:\n${formatErrors(plan.errors)}`);
    return EXIT.invalid;
  }
  if (plan.ok === false || plan.actions.some((a) => a.action === 'refused')) {
    out.write(
      'Not everything was applied (see above): follow the reason, fix the manifests, then apply again.\n',
    );
    return EXIT.invalid;
  }
  if (plan.revision) out.write(`Applied revision ${plan.revision} as source "${plan.source}".\n`);
  return EXIT.ok;
}
