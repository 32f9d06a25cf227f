import { parseArgs } from 'node:util';
import { requireConfig } from './config.js';
import { CliError, UsageError } from './errors.js';
import { request } from './http.js';
import { readManifests } from './manifests.js';
import { formatApplied, formatErrors, formatPlan, type Applied, type Plan } from './plan-format.js';

export const DIFF_USAGE = 'vtl diff -f DIR [--prune] [--source NAME]';
export const APPLY_USAGE = 'vtl apply -f DIR [--prune] [--source NAME]';

/** Exit codes of `vtl diff`, as `kubectl diff`'s. */
export const DIFF_EXIT = { noChanges: 0, changes: 1, error: 2 } as const;

/** Activation of a library restarts the data plane: give apply the time an activation takes. */
const APPLY_TIMEOUT_MS = 15 * 60_000;

async function body(argv: string[], usage: string) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      filename: { type: 'string', short: 'f' },
      prune: { type: 'boolean' },
      source: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`Unexpected argument ${positionals[0]}.`, usage);
  if (!values.filename) throw new UsageError('Pass -f DIR (a directory of manifests or one file).', usage);
  const documents = await readManifests(values.filename);
  return {
    ...(values.source ? { source: values.source } : {}),
    documents,
    ...(values.prune ? { prune: true } : {}),
  };
}

/**
 * `vtl diff -f DIR`: POST /api/gitops/plan and print the plan. Exit 0 when nothing would
 * change, 1 when something would, 2 on invalid manifests, a refused change or any error.
 */
export async function diff(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const config = await requireConfig();
  const plan = (await request(config, 'POST', '/api/gitops/plan', await body(argv, DIFF_USAGE))).body as Plan;
  out.write(formatPlan(plan));
  if (!plan.valid || plan.actions.some((a) => a.action === 'refused')) return DIFF_EXIT.error;
  return plan.actions.some((a) => a.action !== 'unchanged') ? DIFF_EXIT.changes : DIFF_EXIT.noChanges;
}

/**
 * `vtl apply -f DIR`: POST /api/gitops/apply (all or nothing) and print what changed. Exit 0
 * when everything declared is applied, 1 when the set is invalid or a change was refused.
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
      );
    throw err;
  }
  out.write(formatApplied(plan));
  if (!plan.valid) {
    out.write(`The manifests are invalid; nothing was changed:\n${formatErrors(plan.errors)}`);
    return 1;
  }
  if (plan.ok === false || plan.actions.some((a) => a.action === 'refused')) {
    out.write(
      'Not everything was applied (see above): follow the reason, fix the manifests, then apply again.\n',
    );
    return 1;
  }
  if (plan.revision) out.write(`Applied revision ${plan.revision} as source "${plan.source}".\n`);
  return 0;
}
