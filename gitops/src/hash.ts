import { createHash } from 'node:crypto';

/** JSON with sorted keys, so equal values hash equal whatever order YAML wrote them in. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export const specHash = (spec: unknown) =>
  createHash('sha256').update(canonical(spec)).digest('hex').slice(0, 16);

/** The revision of a set posted without one (the CLI): a hash of its files. */
export const contentRevision = (files: readonly { file: string; content: string }[]) =>
  'sha256:' +
  createHash('sha256')
    .update(canonical(files.map((f) => [f.file, f.content])))
    .digest('hex')
    .slice(0, 16);
