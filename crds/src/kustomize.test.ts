import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CRD_DIRS, crdFiles, kustomizationFile, REPO_ROOT } from './crd-files.js';

const run = promisify(execFile);

// `kubectl kustomize` (Debian's kubectl: scripts/install-test-deps.sh) builds each CRD directory
// into exactly the generated CRDs, as `kubectl apply -k charts/vtl/files/crds` would send them.
describe('kustomization of the CRD directories', () => {
  for (const dir of CRD_DIRS) {
    it(`${dir}/kustomization.yaml lists every generated CRD and kubectl kustomize builds them`, async () => {
      const kustomization = kustomizationFile();
      expect(
        fs.readFileSync(path.join(REPO_ROOT, dir, kustomization.name), 'utf8'),
        'stale: run `npx tsc -b crds && node crds/dist/generate.js`',
      ).toBe(kustomization.text);

      const built = await run('kubectl', ['kustomize', path.join(REPO_ROOT, dir)]).catch((err: Error) => {
        throw new Error(
          `kubectl kustomize failed (install kubectl: scripts/install-test-deps.sh): ${err.message}`,
        );
      });
      const objects = parseAllDocuments(built.stdout).map((d) => d.toJS());
      const expected = crdFiles().map((f) => parse(f.text));
      const byName = (a: { metadata: { name: string } }, b: { metadata: { name: string } }) =>
        a.metadata.name.localeCompare(b.metadata.name);
      expect(objects.sort(byName)).toEqual(expected.sort(byName));
    });
  }
});
