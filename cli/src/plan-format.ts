/** The plan the engine answers (docs/gitops.md). */
export interface PlanError {
  file: string;
  document: number;
  /** The field's line in the file, from 1 (the appliance's YAML parser positions). */
  line?: number;
  kind?: string;
  name?: string;
  field?: string;
  message: string;
}
export type ActionKind = 'create' | 'update' | 'unchanged' | 'prune' | 'refused';
export interface PlanAction {
  kind: string;
  name: string;
  action: ActionKind;
  fields?: string[];
  reason?: string;
}
export interface Plan {
  source: string;
  valid: boolean;
  errors: PlanError[];
  actions: PlanAction[];
}
/** What apply answers: the plan, and what each step did. */
export interface Applied extends Plan {
  revision?: string;
  applied?: { kind: string; name: string; action: ActionKind; ok: boolean; detail: string }[];
  ok?: boolean;
}

const MARK: Record<ActionKind, string> = {
  create: '+',
  update: '~',
  prune: '-',
  refused: '!',
  unchanged: '=',
};

/**
 * The message without the field names it starts with ("spec.numDrives: numDrives: must be…"):
 * the line names the field once, before it.
 */
function withoutField(message: string, field: string): string {
  const leaf = field.split(/[.[]/).pop() ?? field;
  let m = message;
  for (;;) {
    const next = [field, leaf].reduce(
      (acc, f) => (f && acc.startsWith(`${f}: `) ? acc.slice(f.length + 2) : acc),
      m,
    );
    if (next === m) return m;
    m = next;
  }
}

/** `file:line: Kind/name field: message`, one line per problem (file (document N) without a line). */
export function formatErrors(errors: PlanError[]): string {
  return errors
    .map((e) => {
      // The API counts documents from 0; people count from 1.
      const where = e.line ? `${e.file}:${e.line}` : `${e.file} (document ${e.document + 1})`;
      const what = e.kind || e.name ? `${e.kind || '?'}/${e.name || '?'}` : '';
      const subject = [what, e.field].filter(Boolean).join(' ');
      return `  ${where}: ${subject ? `${subject}: ` : ''}${withoutField(e.message, e.field ?? '')}\n`;
    })
    .join('');
}

/** A readable plan: one line per change (unchanged objects only counted), then a summary. */
export function formatPlan(plan: Plan): string {
  if (!plan.valid)
    return (
      `The manifests are invalid; nothing would change:\n${formatErrors(plan.errors)}` +
      'Fix these files and run `vtl diff` again.\n'
    );
  const lines = plan.actions
    .filter((a) => a.action !== 'unchanged')
    .map((a) => {
      const id = `${a.kind}/${a.name}`;
      const detail =
        a.action === 'update' && a.fields?.length
          ? `update: ${a.fields.join(', ')}`
          : a.action === 'refused'
            ? `refused: ${a.reason ?? 'no reason given'}`
            : a.action;
      return `${MARK[a.action]} ${id}  ${detail}\n`;
    });
  const count = (k: ActionKind) => plan.actions.filter((a) => a.action === k).length;
  const summary =
    `Plan for source "${plan.source}": ${count('create')} to create, ${count('update')} to update, ` +
    `${count('prune')} to prune, ${count('refused')} refused, ${count('unchanged')} unchanged.\n`;
  return lines.join('') + summary;
}

const PAST: Record<ActionKind, string> = {
  create: 'created',
  update: 'configured',
  prune: 'pruned',
  unchanged: 'unchanged',
  refused: 'refused',
};

/** What apply did, one line per object, like `kubectl apply`; a failed step with the appliance's reason. */
export function formatApplied(result: Applied): string {
  const lines = result.actions
    .filter((a) => a.action === 'unchanged' || a.action === 'refused')
    .map((a) => ({
      kind: a.kind,
      name: a.name,
      action: a.action,
      ok: a.action !== 'refused',
      detail: a.reason ?? '',
    }));
  for (const step of result.applied ?? []) lines.push(step);
  return lines
    .map((a) => {
      const what = `${a.kind.toLowerCase()}/${a.name}`;
      if (!a.ok) return `${what} ${a.action === 'refused' ? 'refused' : 'failed'}: ${a.detail}\n`;
      return `${what} ${PAST[a.action]}\n`;
    })
    .join('');
}
