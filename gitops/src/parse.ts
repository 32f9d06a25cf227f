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

function issuesOf(error: z.ZodError, at: Omit<PlanError, 'field' | 'message'>): PlanError[] {
  return error.issues.map((issue) => {
    const field = fieldPath(issue.path);
    // An unrecognized key names the key itself, so the message says exactly what to remove.
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    return {
      ...at,
      field: keys.length === 1 ? fieldPath([...issue.path, keys[0] as string]) : field,
      message: `${field ? `${field}: ` : ''}${issue.message}`,
    };
  });
}

/**
 * Parses manifest files (YAML, several documents each, empty documents skipped) into declared
 * objects, checking each against its kind's schema and rules. Every problem names the file, the
 * document and the field; an object with a problem is left out of `objects`.
 */
export function parseManifests(files: readonly ManifestFile[]): Parsed {
  const objects: Located[] = [];
  const errors: PlanError[] = [];
  for (const { file, content } of files) {
    const docs = loadYaml().parseAllDocuments(content, { prettyErrors: false, uniqueKeys: true });
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((doc, document) => {
      const base = { file, document, kind: '', name: '' };
      if (doc.errors.length > 0) {
        for (const e of doc.errors)
          errors.push({ ...base, field: '', message: `YAML: ${e.message.split('\n')[0] ?? e.message}` });
        return;
      }
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
        errors.push({ ...at, field: 'apiVersion', message: `apiVersion must be ${API_VERSION}` });
        return;
      }
      if (!(KIND_NAMES as readonly string[]).includes(kind)) {
        errors.push({ ...at, field: 'kind', message: `kind must be one of ${KIND_NAMES.join(', ')}` });
        return;
      }
      const model = KINDS[kind as KindName];
      const parsed = model.object.safeParse(value);
      if (!parsed.success) {
        errors.push(...issuesOf(parsed.error, at));
        return;
      }
      const object = parsed.data as DeclaredObject;
      const broken = ruleProblems(object);
      if (broken.length > 0) {
        errors.push(
          ...broken.map((r) => ({
            ...at,
            field: `spec.${r.field}`,
            message: `spec.${r.field}: ${r.message}`,
          })),
        );
        return;
      }
      objects.push({ object, file, document });
    });
  }
  return { objects, errors };
}
