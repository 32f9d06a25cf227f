import fs from 'node:fs/promises';
import path from 'node:path';
import { CliError } from './errors.js';
import { EXIT } from './exit.js';

/** One manifest file as the plan/apply endpoints take it. */
export interface ManifestFile {
  /** Relative to the directory given (forward slashes), so errors name what the user sees. */
  file: string;
  content: string;
}

const isManifest = (name: string) => /\.ya?ml$/i.test(name);

/**
 * Every *.yaml / *.yml under `target` (recursively, sorted, hidden folders such as .git
 * skipped), or the one file `target` names.
 */
export async function readManifests(target: string): Promise<ManifestFile[]> {
  let stat;
  try {
    stat = await fs.stat(target);
  } catch {
    throw new CliError(
      `${target} does not exist.`,
      'Pass -f with a directory of manifests or a YAML file.',
      undefined,
      undefined,
      EXIT.usage,
    );
  }
  if (stat.isFile()) return [{ file: path.basename(target), content: await fs.readFile(target, 'utf8') }];
  const files: ManifestFile[] = [];
  const walk = async (dir: string) => {
    const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(abs);
      else if (entry.isFile() && isManifest(entry.name))
        files.push({
          file: path.relative(target, abs).split(path.sep).join('/'),
          content: await fs.readFile(abs, 'utf8'),
        });
    }
  };
  await walk(target);
  if (files.length === 0)
    throw new CliError(
      `No *.yaml or *.yml files under ${target}.`,
      'Pass -f with the directory that holds your manifests.',
      undefined,
      undefined,
      EXIT.usage,
    );
  return files;
}
