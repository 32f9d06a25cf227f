import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderChart, type K8sObject } from './render-chart.js';

// The chart's monitoring, sizing, probes, Ingress and NetworkPolicies, rendered as `helm
// template` would (render-chart.ts); the alerting rules are checked and unit-tested with
// Debian's promtool (scripts/install-test-deps.sh).

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
const GENERATED = ['vtl-admin', 'vtl-sealing', 'vtl-etcd-tls', 'vtl-apiserver-tls'];
const find = (objs: K8sObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);

let installed: K8sObject[] = [];
let everything: K8sObject[] = [];
beforeAll(async () => {
  installed = await renderChart();
  const existing = installed.filter((o) => o.kind === 'Secret' && GENERATED.includes(o.metadata.name));
  everything = await renderChart({
    existing,
    values: {
      metrics: { prometheusRule: { enabled: true }, dashboard: { enabled: true } },
      ingress: { enabled: true, host: 'vtl.lab.example', className: 'nginx' },
      networkPolicy: { enabled: true },
      etcd: { replicaCount: 3 },
    },
  });
}, 300_000);

/** promtool with its arguments; its output and exit status. */
function promtool(...args: string[]) {
  const res = spawnSync('promtool', args, { encoding: 'utf8' });
  if (res.error) throw res.error;
  return { status: res.status, output: res.stdout + res.stderr };
}

describe('the chart: sizing and probes', () => {
  it('gives every container requests and limits, and startup, readiness and liveness probes', () => {
    for (const w of installed.filter((o) => WORKLOADS.has(o.kind)))
      for (const c of w.spec.template.spec.containers) {
        const what = `${w.metadata.name}/${c.name}`;
        expect(c.resources?.requests?.cpu, what).toBeTruthy();
        expect(c.resources?.requests?.memory, what).toBeTruthy();
        expect(c.resources?.limits?.memory, what).toBeTruthy();
        for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'])
          expect(c[probe], `${what} ${probe}`).toBeDefined();
        // The startup probe gives a slow start minutes, then the liveness probe takes over.
        expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold, what).toBeGreaterThanOrEqual(
          180,
        );
      }
    const emulator = find(installed, 'DaemonSet', 'vtl-nodeagent')!.spec.template.spec.containers.find(
      (c: { name: string }) => c.name === 'emulator',
    );
    // The data plane is not CPU-throttled; it has a memory ceiling above its drive buffers.
    expect(emulator.resources.limits.cpu).toBeUndefined();
    expect(emulator.startupProbe.exec.command).toEqual(['vtl', 'emulator', '--probe']);
  });

  it('keeps the replicas of the apiserver and the controller apart, by node and by zone', () => {
    for (const name of ['vtl-apiserver', 'vtl-controller']) {
      const spec = find(installed, 'Deployment', name)!.spec.template.spec;
      const component = name.replace('vtl-', '');
      const term =
        spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
      expect(term.topologyKey).toBe('kubernetes.io/hostname');
      expect(term.labelSelector.matchLabels['app.kubernetes.io/component']).toBe(component);
      expect(spec.topologySpreadConstraints).toEqual([
        expect.objectContaining({
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: {
            matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': component }),
          },
        }),
      ]);
    }
  });

  it('renders no monitoring objects, Ingress or NetworkPolicy unless asked', () => {
    const kinds = new Set(installed.map((o) => o.kind));
    for (const kind of ['PrometheusRule', 'Ingress', 'NetworkPolicy'])
      expect(kinds.has(kind), kind).toBe(false);
    expect(find(installed, 'ConfigMap', 'vtl-dashboard')).toBeUndefined();
  });
});

describe('the chart: alerts, dashboard, Ingress and NetworkPolicies', () => {
  it('has alerting rules promtool accepts, and they fire as an operator needs', () => {
    const rule = find(everything, 'PrometheusRule', 'vtl')!;
    const alerts = rule.spec.groups.flatMap((g: { rules: { alert: string }[] }) =>
      g.rules.map((r) => r.alert),
    );
    expect(alerts).toEqual(
      expect.arrayContaining([
        'VtlComponentDown',
        'VtlPoolNearlyFull',
        'VtlJobFailed',
        'VtlCertificateNearExpiry',
      ]),
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-rules-'));
    try {
      const rules = path.join(dir, 'rules.yaml');
      fs.writeFileSync(rules, JSON.stringify({ groups: rule.spec.groups }));
      const check = promtool('check', 'rules', rules);
      expect(check.output).toContain(`SUCCESS: ${alerts.length} rules found`);
      expect(check.status).toBe(0);
      // What each alert does with series as the apiserver serves them (promtool's rule tests,
      // which compare the annotations too: filled in here as Prometheus fills them in).
      const annotationsOf = (alert: string, labels: Record<string, string>, value = '') => {
        const r = rule.spec.groups[0].rules.find((x: { alert: string }) => x.alert === alert);
        return Object.fromEntries(
          Object.entries(r.annotations as Record<string, string>).map(([k, v]) => [
            k,
            v
              .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, l: string) => labels[l] ?? '')
              .replace(/\{\{ \$value[^}]*\}\}/g, value),
          ]),
        );
      };
      const expect1 = (alert: string, labels: Record<string, string>, severity: string, value?: string) => ({
        alertname: alert,
        exp_alerts: [
          { exp_labels: { severity, ...labels }, exp_annotations: annotationsOf(alert, labels, value) },
        ],
      });
      const tests = path.join(dir, 'tests.yaml');
      fs.writeFileSync(
        tests,
        JSON.stringify({
          rule_files: [rules],
          evaluation_interval: '1m',
          tests: [
            {
              interval: '1m',
              input_series: [
                { series: 'vtl_up{component="emulator"}', values: '1 0x20' },
                { series: 'vtl_up{component="etcd"}', values: '1x20' },
                { series: 'vtl_pool_fs_used_bytes{pool="p1"}', values: '90x20' },
                { series: 'vtl_pool_fs_total_bytes{pool="p1"}', values: '100x20' },
                { series: 'vtl_pool_fs_used_bytes{pool="p2"}', values: '10x20' },
                { series: 'vtl_pool_fs_total_bytes{pool="p2"}', values: '100x20' },
                { series: 'vtl_jobs_total{kind="export",outcome="failed"}', values: '0 0 1x20' },
                { series: 'vtl_jobs_total{kind="import",outcome="failed"}', values: '0x20' },
              ],
              alert_rule_test: [
                { eval_time: '1m', alertname: 'VtlComponentDown', exp_alerts: [] },
                { ...expect1('VtlComponentDown', { component: 'emulator' }, 'critical'), eval_time: '4m' },
                { eval_time: '3m', alertname: 'VtlApiserverNotScraped', exp_alerts: [] },
                {
                  ...expect1('VtlApiserverNotScraped', { component: 'apiserver' }, 'critical'),
                  eval_time: '6m',
                },
                { ...expect1('VtlPoolNearlyFull', { pool: 'p1' }, 'warning', '90%'), eval_time: '15m' },
                { ...expect1('VtlJobFailed', { kind: 'export' }, 'warning'), eval_time: '3m' },
                { eval_time: '3m', alertname: 'VtlCertificateNearExpiry', exp_alerts: [] },
              ],
            },
          ],
        }),
      );
      const test = promtool('test', 'rules', tests);
      expect(test.output).toContain('SUCCESS');
      expect(test.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ships a Grafana dashboard of the series the apiserver serves', () => {
    const map = find(everything, 'ConfigMap', 'vtl-dashboard')!;
    expect(map.metadata.labels?.grafana_dashboard).toBe('1');
    const dashboard = JSON.parse(map.data['vtl.json']);
    expect(dashboard.uid).toBe('vtl-appliance');
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
      p.targets.map((t) => t.expr),
    );
    const served = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/observability.md'), 'utf8');
    for (const name of new Set(exprs.join(' ').match(/\bvtl_[a-z_]+/g)))
      expect(served, `${name} is a documented series`).toContain(name.replace(/_(bucket|count|sum)$/, ''));
  });

  it('routes the console host to the apiserver, and fences etcd to its clients and peers', () => {
    const ingress = find(everything, 'Ingress', 'vtl-console')!;
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.rules[0]).toMatchObject({
      host: 'vtl.lab.example',
      http: {
        paths: [{ path: '/', backend: { service: { name: 'vtl-apiserver', port: { name: 'https' } } } }],
      },
    });
    const policies = everything.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name);
    expect(policies.sort()).toEqual(['vtl-apiserver', 'vtl-controller', 'vtl-etcd', 'vtl-gitops']);
    const etcd = find(everything, 'NetworkPolicy', 'vtl-etcd')!;
    const peer = etcd.spec.ingress.find((r: { ports: { port: string }[] }) => r.ports[0]!.port === 'peer');
    expect(peer.from[0].podSelector.matchLabels['app.kubernetes.io/component']).toBe('etcd');
    // Every policy selects pods the chart runs.
    const podLabels = everything
      .filter((o) => WORKLOADS.has(o.kind))
      .map((o) => o.spec.template.metadata.labels as Record<string, string>);
    for (const p of everything.filter((o) => o.kind === 'NetworkPolicy'))
      expect(
        podLabels.some((l) => Object.entries(p.spec.podSelector.matchLabels).every(([k, v]) => l[k] === v)),
        p.metadata.name,
      ).toBe(true);
  });
});
