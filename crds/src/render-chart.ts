import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './crd-files.js';

const run = promisify(execFile);
const CHART = path.join(REPO_ROOT, 'charts/vtl');
const RENDERER = path.join(REPO_ROOT, 'charts/render/main.go');

/** A rendered Kubernetes object (only what the tests read is typed). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // Rendered manifests are read as a user would read YAML: untyped below the metadata.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [key: string]: any;
}

/**
 * Builds charts/render (Go text/template + sprig from Debian's packages, the way Helm renders)
 * once per version of its source, into the OS temp dir.
 */
async function renderer(): Promise<string> {
  const source = fs.readFileSync(RENDERER);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const bin = path.join(os.tmpdir(), `vtl-chart-render-${hash}`);
  if (fs.existsSync(bin)) return bin;
  const tmp = `${bin}.${process.pid}.tmp`;
  try {
    await run('go', ['build', '-o', tmp, '.'], {
      cwd: path.dirname(RENDERER),
      env: {
        ...process.env,
        GOPATH: '/usr/share/gocode',
        GO111MODULE: 'off',
        GOFLAGS: '',
        GOCACHE: path.join(os.tmpdir(), 'vtl-go-cache'),
      },
    });
  } catch (err) {
    throw new Error(
      `building charts/render failed (needs Debian's golang-go, golang-github-masterminds-sprig-dev, golang-gopkg-yaml.v3-dev, golang-github-xeipuuv-gojsonschema-dev; scripts/install-test-deps.sh installs them): ${(err as Error).message}`,
    );
  }
  fs.renameSync(tmp, bin);
  return bin;
}

export interface RenderOptions {
  /** Laid over values.yaml, as `-f` does. */
  values?: Record<string, unknown>;
  /** Objects the cluster already has, for `lookup`: the chart's own output of an earlier install. */
  existing?: K8sObject[];
  upgrade?: boolean;
}

/** Renders the chart; rejects with the renderer's message (a `fail`, a schema violation). */
export async function renderChart(opts: RenderOptions = {}): Promise<K8sObject[]> {
  const out = await renderRaw(opts, false);
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** NOTES.txt as `helm install` prints it. */
export async function renderNotes(opts: RenderOptions = {}): Promise<string> {
  return renderRaw(opts, true);
}

async function renderRaw(opts: RenderOptions, notes: boolean): Promise<string> {
  const bin = await renderer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-render-'));
  try {
    const args = ['-chart', CHART, '-release', 'vtl', '-namespace', 'vtl'];
    if (opts.values) {
      fs.writeFileSync(path.join(dir, 'values.json'), JSON.stringify(opts.values));
      args.push('-values', path.join(dir, 'values.json'));
    }
    if (opts.existing) {
      const cluster = Object.fromEntries(
        opts.existing.map((o) => [
          `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
          o,
        ]),
      );
      fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify(cluster));
      args.push('-lookup', path.join(dir, 'cluster.json'));
    }
    if (opts.upgrade) args.push('-upgrade');
    if (notes) args.push('-notes');
    try {
      const { stdout } = await run(bin, args, { maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr;
      throw new Error(stderr?.trim() || (err as Error).message);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
