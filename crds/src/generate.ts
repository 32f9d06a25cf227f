import fs from 'node:fs/promises';
import path from 'node:path';
import { CRD_DIRS, crdFiles, isGeneratedName, kustomizationFile, REPO_ROOT } from './crd-files.js';

/** Writes every CRD into each CRD directory and removes ones no longer generated. */
async function main() {
  const files = crdFiles();
  const wanted = new Set(files.map((f) => f.name));
  for (const dir of CRD_DIRS) {
    const abs = path.join(REPO_ROOT, dir);
    await fs.mkdir(abs, { recursive: true });
    for (const name of await fs.readdir(abs)) {
      if (isGeneratedName(name) && !wanted.has(name)) {
        await fs.rm(path.join(abs, name));
        console.log(`removed ${dir}/${name}`);
      }
    }
    for (const file of [...files, kustomizationFile()]) {
      await fs.writeFile(path.join(abs, file.name), file.text);
      console.log(`wrote ${dir}/${file.name}`);
    }
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
