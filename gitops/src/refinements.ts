import { KINDS, type DeclaredObject, type SpecRule } from './model/index.js';

/**
 * The TypeScript side of each kind's CEL rules (model/*.ts `rules`): the same checks, by the
 * same rule text, so a manifest in Git is held to what the CRD enforces in a cluster.
 */
type Check = (spec: Record<string, unknown>) => boolean;

const iscsi = (s: Record<string, unknown>) =>
  s.fabric !== undefined ? s.fabric === 'iscsi' : /^(iqn|eui)\./i.test(String(s.wwpn ?? ''));

const CHECKS: Record<string, Check> = {
  "self.product != '3573-TL' || self.numDrives <= 4": (s) =>
    s.product !== '3573-TL' || Number(s.numDrives) <= 4,
  [KINDS.TapeInitiator.rules[0]?.rule ?? '']: (s) => s.ports === undefined || !iscsi(s),
  [KINDS.TapeInitiator.rules[1]?.rule ?? '']: (s) => s.chap === undefined || iscsi(s),
  [KINDS.TapeInitiator.rules[2]?.rule ?? '']: (s) => {
    const chap = s.chap as Record<string, unknown> | undefined;
    return chap === undefined || (chap.mutualUsername === undefined) === (chap.mutualSecretRef === undefined);
  },
};

/** Every rule of the object's kind that its spec breaks. */
export function ruleProblems(object: DeclaredObject): SpecRule[] {
  const spec = object.spec as Record<string, unknown>;
  return KINDS[object.kind].rules.filter((r) => {
    const check = CHECKS[r.rule];
    if (!check) throw new Error(`No TypeScript check for the ${object.kind} rule ${r.rule}`);
    return !check(spec);
  });
}

/** Test hook: every declared rule has its check. */
export const hasCheck = (rule: string) => rule in CHECKS;
