import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from './crd-files.js';
import { RESOURCES } from './resources.js';

// There is no helm binary here, so these checks read the chart's text: the parts of it that
// are plain YAML are parsed, the templates are checked for the chart's label conventions.

const CHART = path.join(REPO_ROOT, 'charts/vtl');
const read = (rel: string) => fs.readFileSync(path.join(CHART, rel), 'utf8');
const templateNames = fs.readdirSync(path.join(CHART, 'templates')).filter((f) => f.endsWith('.yaml'));
/** Templates written out resource by resource (crds.yaml renders the generated CRD files instead). */
const resourceTemplates = templateNames.filter((name) => name !== 'crds.yaml');
const templates = templateNames.map((name) => ({ name, text: read(`templates/${name}`) }));
const helpers = read('templates/_helpers.tpl');
const values = parse(read('values.yaml')) as Record<string, unknown>;

/** Maps whose keys are data (labels, Kubernetes objects), not chart settings. */
const FREE_FORM = new Set([
  'nodeSelector',
  'annotations',
  'podAnnotations',
  'resources',
  'affinity',
  'podSecurityContext',
  'securityContext',
  'updateStrategy',
  'labels',
]);

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Dotted paths of every documented value: leaves, lists, empty maps and free-form maps. */
function valuePaths(node: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(node).flatMap(([key, value]) => {
    const at = prefix ? `${prefix}.${key}` : key;
    return isMap(value) && Object.keys(value).length > 0 && !FREE_FORM.has(key)
      ? valuePaths(value, at)
      : [at];
  });
}

/** Dotted paths of every key in the values tree, free-form maps included. */
function allPaths(node: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(node).flatMap(([key, value]) => {
    const at = prefix ? `${prefix}.${key}` : key;
    return [at, ...(isMap(value) ? allPaths(value, at) : [])];
  });
}

/** The body of a `{{ define "name" }}` block in _helpers.tpl. */
function define(name: string): string {
  const match = new RegExp(`{{-? define "${name}" -?}}([\\s\\S]*?){{-? end }}\\n\\n`).exec(`${helpers}\n\n`);
  if (!match?.[1]) throw new Error(`no define ${name}`);
  return match[1];
}

/** Lines indented under each line matching `key:` (a YAML block), for every such key. */
function blocks(text: string, key: RegExp): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)(-\s+)?([\w]+):\s*$/.exec(line);
    if (!m || !key.test(m[3] ?? '')) return;
    const indent = (m[1] ?? '').length + (m[2] ?? '').length;
    const body: string[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.trim() !== '' && next.length - next.trimStart().length <= indent) break;
      body.push(next);
    }
    found.push(body.join('\n'));
  });
  return found;
}

const VERSIONED = /vtl\.labels|\.Chart\.Version|vtl\.chart|helm\.sh\/chart|app\.kubernetes\.io\/version/;

describe('Chart.yaml and values.yaml', () => {
  it('Chart.yaml is an application chart of apiVersion v2 with semantic versions', () => {
    const chart = parse(read('Chart.yaml')) as Record<string, string>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'vtl', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+(?:-[\w.]+)?$/);
    expect(chart.appVersion).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('values.yaml keys are camelCase', () => {
    const paths = valuePaths(values);
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) expect(p, p).toMatch(/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*$/);
  });

  it('every value is documented in README.md and commented in values.yaml', () => {
    const readme = read('README.md');
    const text = read('values.yaml');
    for (const p of valuePaths(values)) {
      expect(readme, `README.md lacks \`${p}\``).toContain(`| \`${p}\` |`);
      const key = p.split('.').at(-1) as string;
      expect(text, `values.yaml lacks a comment for ${p}`).toMatch(new RegExp(`# -- .*\\n\\s*${key}:`));
    }
  });

  it('every .Values reference in the templates exists in values.yaml', () => {
    const prefixes = new Set(allPaths(values));
    for (const { name, text } of [
      ...templates,
      { name: '_helpers.tpl', text: helpers },
      { name: 'NOTES.txt', text: read('templates/NOTES.txt') },
    ]) {
      for (const [, ref] of text.matchAll(/\.Values\.([\w.]+)/g)) {
        expect(prefixes.has(ref as string), `${name}: .Values.${ref}`).toBe(true);
      }
    }
  });

  it('etcd defaults to one member and the apiserver serves 8443 with 8080 for health and metrics', () => {
    expect(values.etcd).toMatchObject({ enabled: true, replicaCount: 1, externalEndpoints: [] });
    expect(values.apiserver).toMatchObject({ httpsPort: 8443, plain: { enabled: true, port: 8080 } });
    expect(values.controller).toMatchObject({ replicaCount: 2 });
    expect(values.nodeagent).toMatchObject({ iscsiPort: 3260 });
  });
});

describe('templates', () => {
  it('the helpers keep the chart version out of the selector labels', () => {
    expect(define('vtl.selectorLabels')).not.toMatch(VERSIONED);
    expect(define('vtl.selectorLabels')).toMatch(/app\.kubernetes\.io\/name:/);
    expect(define('vtl.selectorLabels')).toMatch(/app\.kubernetes\.io\/instance:/);
    const labels = define('vtl.labels');
    for (const label of ['helm.sh/chart', 'app.kubernetes.io/version', 'app.kubernetes.io/managed-by']) {
      expect(labels).toContain(label);
    }
    expect(labels).toContain('include "vtl.selectorLabels" .');
  });

  it.each(resourceTemplates)('%s holds one resource labelled with vtl.labels', (name) => {
    const text = read(`templates/${name}`);
    expect(text.match(/^kind: /gm), 'one resource per template').toHaveLength(1);
    expect(text).toMatch(/^apiVersion: /m);
    expect(text).toMatch(/^ {2}labels:\n\s+{{- include "vtl\.labels" \. \| nindent 4 }}/m);
  });

  it.each(templateNames)('%s: selectors and claim templates never carry the chart version', (name) => {
    const text = read(`templates/${name}`);
    for (const body of [
      ...blocks(text, /^(selector|matchLabels)$/),
      ...blocks(text, /^volumeClaimTemplates$/),
    ]) {
      expect(body).not.toMatch(VERSIONED);
    }
    for (const body of blocks(text, /^matchLabels$/))
      expect(body).toContain('include "vtl.selectorLabels" .');
  });

  it('workloads select their own component and label their pods the same way', () => {
    for (const { name, text } of templates.filter((t) =>
      /^kind: (Deployment|StatefulSet|DaemonSet)$/m.test(t.text),
    )) {
      const component = /app\.kubernetes\.io\/component: (\w+)/.exec(text)?.[1];
      expect(component, name).toBeDefined();
      const [selector] = blocks(text, /^matchLabels$/);
      expect(selector, name).toContain(`app.kubernetes.io/component: ${component}`);
      const [podLabels] = blocks(text.slice(text.indexOf('  template:')), /^labels$/);
      expect(podLabels, name).toContain('include "vtl.labels" .');
      expect(podLabels, name).toContain(`app.kubernetes.io/component: ${component}`);
    }
  });

  it('the processes get the environment they read and run the built entry points', () => {
    const all = templates.map((t) => t.text).join('\n') + helpers;
    for (const env of [
      'VTL_ETCD_ENDPOINTS',
      'VTL_STATE_DIR',
      'VTL_BIND',
      'VTL_HTTPS_PORT',
      'VTL_PLAIN_PORT',
      'VTL_ISCSI_PORT',
      'VTL_NODE',
      'VTL_DEFAULT_POOL',
    ]) {
      expect(all, env).toContain(`- name: ${env}\n`);
    }
    expect(helpers).toMatch(/- name: VTL_NODE\n\s+valueFrom:\n\s+fieldRef:\n\s+fieldPath: spec\.nodeName/);
    // The image's entry point (deploy/image/vtl) maps each process name to its built file.
    const entry = fs.readFileSync(path.join(REPO_ROOT, 'deploy/image/vtl'), 'utf8');
    for (const [process, file] of [
      ['apiserver', 'apiserver/dist/server.js'],
      ['controller', 'controller/dist/main.js'],
      ['nodeagent', 'nodeagent/dist/main.js'],
      ['emulator', 'nodeagent/dist/emulator-runner.js'],
    ] as const) {
      expect(all).toContain(`args: ['${process}']`);
      expect(entry).toContain(`${process}) exec node ${file}`);
      const source = path.join(REPO_ROOT, file.replace('/dist/', '/src/').replace(/\.js$/, '.ts'));
      expect(fs.existsSync(source), source).toBe(true);
    }
  });

  it('the nodeagent is a privileged host-network DaemonSet on appliance nodes with LIO mounts', () => {
    const text = read('templates/nodeagent-daemonset.yaml');
    expect(text).toMatch(/^kind: DaemonSet$/m);
    expect(text).toContain('hostNetwork: true');
    expect(text).toContain('privileged: true');
    expect(text).toContain('.Values.nodeagent.nodeSelector');
    for (const hostPath of ['path: /sys\n', 'path: /sys/kernel/config\n']) expect(text).toContain(hostPath);
  });

  it('the GitOps role covers every CRD (read, watch, finalizers) and its status, and nothing else of the group', () => {
    const text = read('templates/gitops-role.yaml');
    const plurals = RESOURCES.map((r) => r.plural);
    expect(text).toContain(
      `resources: [${plurals.map((p) => `'${p}'`).join(', ')}]\n    verbs: ['get', 'list', 'watch', 'update', 'patch']`,
    );
    expect(text).toContain(
      `resources: [${plurals.map((p) => `'${p}/status'`).join(', ')}]\n    verbs: ['get', 'update', 'patch']`,
    );
    expect(text).toMatch(/resources: \['secrets'\]\n {4}verbs: \['get'\]/);
    expect(text).not.toMatch(/'create'.*\n?.*vtl|'delete'/);
    expect(text).toContain("apiGroups: ['vtl.appliance.io']");
  });
});
