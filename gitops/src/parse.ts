import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import type { ManifestFile, PlanError } from './contract.js';
import { API_VERSION, KINDS, KIND_NAMES, type DeclaredObject, type KindName } from './model/index.js';
import { ruleProblems } from './refinements.js';

/**
 * The YAML parser, loaded by the first parse: some 9 MB of a process's memory that the
 * apiserver and controller of an appliance without GitOps sources never need (issue 13's idle
 * memory; this package's schemas are imported by both at start). Synchronous, as parsing is.
 */
let yaml: typeof Yaml | undefined;
const loadYaml = () => (yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

/** A declared object and where it was written, for error messages. */
export interface Located {
  object: DeclaredObject;
  file: string;
  /** Index of the document in its file, from 0. */
  document: number;
  /** The line (from 1) of a field (`spec.ports[1]`), or of its nearest enclosing field present. */
  lineOf: (field: string) => number | undefined;
}

export interface Parsed {
  objects: Located[];
  errors: PlanError[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `spec.chap.secretRef.name`, `spec.ports[1]`: how a field is named in an error. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function issuesOf(
  error: z.ZodError,
  at: Omit<PlanError, 'field' | 'message' | 'line'>,
  lineOf: (field: string) => number | undefined,
): PlanError[] {
  return error.issues.map((issue) => {
    const field = fieldPath(issue.path);
    // An unrecognized key names the key itself, so the message says exactly what to remove.
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const named = keys.length === 1 ? fieldPath([...issue.path, keys[0] as string]) : field;
    return {
      ...at,
      ...lineAt(lineOf(named)),
      field: named,
      message: `${field ? `${field}: ` : ''}${issue.message}`,
    };
  });
}

const lineAt = (line: number | undefined) => (line === undefined ? {} : { line });

/** `spec.ports[1]` → ['spec', 'ports', 1]: the path the YAML document is walked by. */
const pathOf = (field: string): (string | number)[] =>
  field
    .split(/\.|(?=\[)/)
    .filter(Boolean)
    .map((part) => (/^\[\d+\]$/.test(part) ? Number(part.slice(1, -1)) : part));

/**
 * Finds a field's line in a parsed document: the key's own line for a mapping entry, else the
 * value's; a field that is not there (a missing required one) gets its nearest parent's line.
 */
function lineFinder(doc: Yaml.Document.Parsed, lines: Yaml.LineCounter) {
  const yamlLib = loadYaml();
  return (field: string): number | undefined => {
    let node: unknown = doc.contents;
    let found: number | undefined = offsetOf(doc.contents);
    for (const part of pathOf(field)) {
      if (yamlLib.isMap(node)) {
        const pair = node.items.find((p) => yamlLib.isScalar(p.key) && p.key.value === part);
        if (!pair) break;
        found = offsetOf(pair.key) ?? offsetOf(pair.value) ?? found;
        node = pair.value;
      } else if (yamlLib.isSeq(node) && typeof part === 'number') {
        const item = node.items[part];
        if (item === undefined) break;
        found = offsetOf(item) ?? found;
        node = item;
      } else break;
    }
    return found === undefined ? undefined : lines.linePos(found).line;
  };
}

const offsetOf = (node: unknown): number | undefined =>
  (node as { range?: [number, number, number] } | null)?.range?.[0];

/**
 * Parses manifest files (YAML, several documents each, empty documents skipped) into declared
 * objects, checking each against its kind's schema and rules. Every problem names the file, the
 * document and the field; an object with a problem is left out of `objects`.
 */
export function parseManifests(files: readonly ManifestFile[]): Parsed {
  const objects: Located[] = [];
  const errors: PlanError[] = [];
  for (const { file, content } of files) {
    const lines = new (loadYaml().LineCounter)();
    const docs = loadYaml().parseAllDocuments(content, {
      prettyErrors: false,
      uniqueKeys: true,
      lineCounter: lines,
    });
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((doc, document) => {
      const base = { file, document, kind: '', name: '' };
      if (doc.errors.length > 0) {
        for (const e of doc.errors)
          errors.push({
            ...base,
            ...lineAt(lines.linePos(e.pos[0]).line),
            field: '',
            message: `YAML: ${e.message.split('\n')[0] ?? e.message}`,
          });
        return;
      }
      const lineOf = lineFinder(doc, lines);
      const value: unknown = doc.toJS({ maxAliasCount: 100 });
      if (value === null || value === undefined) return;
      if (!isRecord(value)) {
        errors.push({
          ...base,
          field: '',
          message: 'a document must be a mapping with apiVersion, kind, metadata and spec',
        });
        return;
      }
      const kind = typeof value.kind === 'string' ? value.kind : '';
      const name =
        isRecord(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : '';
      const at = { file, document, kind, name };
      if (value.apiVersion !== API_VERSION) {
        errors.push({
          ...at,
          ...lineAt(lineOf('apiVersion')),
          field: 'apiVersion',
          message: `apiVersion must be ${API_VERSION}`,
        });
        return;
      }
      if (!(KIND_NAMES as readonly string[]).includes(kind)) {
        errors.push({
          ...at,
          ...lineAt(lineOf('kind')),
          field: 'kind',
          message: `kind must be one of ${KIND_NAMES.join(', ')}`,
        });
        return;
      }
      const model = KINDS[kind as KindName];
      const parsed = model.object.safeParse(value);
      if (!parsed.success) {
        errors.push(...issuesOf(parsed.error, at, lineOf));
        return;
      }
      const object = parsed.data as DeclaredObject;
      const broken = ruleProblems(object);
      if (broken.length > 0) {
        errors.push(
          ...broken.map((r) => ({
            ...at,
            ...lineAt(lineOf(`spec.${r.field}`)),
            field: `spec.${r.field}`,
            message: `spec.${r.field}: ${r.message}`,
          })),
        );
        return;
      }
      objects.push({ object, file, document, lineOf });
    });
  }
  return { objects, errors };
}
