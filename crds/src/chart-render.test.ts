import { beforeAll, describe, expect, it } from 'vitest';
import { renderChart, renderNotes, type K8sObject } from './render-chart.js';

// The chart rendered as `helm template` would (charts/render: Go text/template + sprig, values
// merged and checked against values.schema.json) over a matrix of values: what an operator's
// `helm install` and `helm upgrade` would send to the cluster.

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
const find = (objs: K8sObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);
const containers = (o: K8sObject): any[] => o.spec.template.spec.containers;
const envOf = (c: any) => Object.fromEntries((c.env ?? []).map((e: any) => [e.name, e.value ?? e.valueFrom]));

/**
 * The Secrets a first install generates (RSA keys: seconds each on a loaded machine). Later
 * renders get them through `lookup`, as an upgrade does, so only two renders make keys.
 */
let installed: K8sObject[] = [];
let generatedSecrets: K8sObject[] = [];
const GENERATED = ['vtl-admin', 'vtl-sealing', 'vtl-etcd-tls', 'vtl-apiserver-tls'];
beforeAll(async () => {
  installed = await renderChart();
  generatedSecrets = installed.filter((o) => o.kind === 'Secret' && GENERATED.includes(o.metadata.name));
}, 300_000);
const render = (values: Record<string, unknown>) => renderChart({ values, existing: generatedSecrets });

/** What every install must hold, whatever the values. */
function checkInvariants(objs: K8sObject[]) {
  for (const o of objs) {
    expect(o.apiVersion, `${o.kind}/${o.metadata.name}`).toBeTruthy();
    expect(o.metadata.labels?.['app.kubernetes.io/instance'], `${o.kind}/${o.metadata.name}`).toBe('vtl');
  }
  for (const w of objs.filter((o) => WORKLOADS.has(o.kind))) {
    for (const c of containers(w)) {
      expect(c.livenessProbe, `${w.metadata.name}/${c.name} liveness`).toBeDefined();
      expect(c.readinessProbe, `${w.metadata.name}/${c.name} readiness`).toBeDefined();
      expect(JSON.stringify(c), 'no reboot from inside a container').not.toMatch(/systemctl|"os"/);
    }
    // Selectors never carry the version (immutable on upgrade) and match the pod labels.
    const sel = w.spec.selector.matchLabels;
    expect(sel['app.kubernetes.io/version']).toBeUndefined();
    expect(w.spec.template.metadata.labels).toMatchObject(sel);
  }
}

describe('the chart with default values', () => {
  it('renders every process from the vtl image with probes, the admin Secret and upgradeable CRDs', async () => {
    const objs = installed;
    checkInvariants(objs);
    const kinds = objs.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Secret/vtl-admin',
        'Deployment/vtl-apiserver',
        'Deployment/vtl-controller',
        'StatefulSet/vtl-etcd',
        'DaemonSet/vtl-nodeagent',
        'PodDisruptionBudget/vtl-apiserver',
        'PodDisruptionBudget/vtl-controller',
        'CustomResourceDefinition/virtualtapelibraries.vtl.appliance.io',
      ]),
    );
    expect(kinds.filter((k) => k.startsWith('CustomResourceDefinition/'))).toHaveLength(5);
    // The Kubernetes source: one replica under the GitOps service account, trusting the
    // apiserver's certificate (not its key) and logging in as admin from the admin Secret.
    const gitops = find(objs, 'Deployment', 'vtl-gitops')!;
    expect(gitops.spec).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
    expect(gitops.spec.template.spec.serviceAccountName).toBe('vtl-gitops');
    const [gitopsC] = containers(gitops);
    expect(gitopsC.command).toEqual(['node', 'gitops/dist/kube/main.js']);
    expect(envOf(gitopsC)).toMatchObject({
      VTL_API_URL: 'https://vtl-apiserver.vtl.svc:8443',
      VTL_API_CA_FILE: '/etc/vtl/api-tls/tls.crt',
      VTL_API_USERNAME: 'admin',
      VTL_API_PASSWORD_FILE: '/etc/vtl/admin/password',
    });
    const gitopsVolumes = gitops.spec.template.spec.volumes;
    expect(gitopsVolumes).toContainEqual({
      name: 'api-tls',
      secret: { secretName: 'vtl-apiserver-tls', items: [{ key: 'tls.crt', path: 'tls.crt' }] },
    });
    expect(find(objs, 'Role', 'vtl-gitops')).toBeDefined();
    expect(find(objs, 'RoleBinding', 'vtl-gitops')?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'vtl-gitops', namespace: 'vtl' },
    ]);
    for (const crd of objs.filter((o) => o.kind === 'CustomResourceDefinition'))
      expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(kinds.some((k) => /^(Namespace|ServiceMonitor)\//.test(k))).toBe(false);
    expect(kinds).not.toContain('PodDisruptionBudget/vtl-etcd'); // one member: a PDB would block every drain

    for (const w of objs.filter((o) => WORKLOADS.has(o.kind)))
      for (const c of containers(w)) expect(c.image).toBe('vtl:0.1.0');
    const etcd = containers(find(objs, 'StatefulSet', 'vtl-etcd')!)[0];
    expect(etcd.command[0]).toBe('etcd');
    expect(etcd.command).toContain('--client-cert-auth');

    const api = find(objs, 'Deployment', 'vtl-apiserver')!;
    const [apiC] = containers(api);
    expect(apiC.args).toEqual(['apiserver']);
    expect(envOf(apiC).VTL_INITIAL_ADMIN_PASSWORD_FILE).toBe('/etc/vtl/admin/password');
    expect(api.spec.template.spec.volumes).toContainEqual(
      expect.objectContaining({
        name: 'admin',
        secret: expect.objectContaining({ secretName: 'vtl-admin' }),
      }),
    );
    expect(api.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    const admin = find(objs, 'Secret', 'vtl-admin')!;
    expect(Buffer.from(admin.data.password, 'base64').toString()).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(admin.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');

    const ctl = containers(find(objs, 'Deployment', 'vtl-controller')!)[0];
    expect(ctl.args).toEqual(['controller']);
    expect(envOf(ctl).VTL_HEALTH_PORT).toBe('9464');
    expect(ctl.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'health' });
    expect(ctl.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'health' });
  });

  it('runs the emulator as its own container beside the nodeagent, and reboots through a host sentinel', async () => {
    const ds = find(installed, 'DaemonSet', 'vtl-nodeagent')!;
    const pod = ds.spec.template.spec;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.shareProcessNamespace).toBe(true);
    const [agent, emulator] = pod.containers;
    expect(agent).toMatchObject({ name: 'nodeagent', args: ['nodeagent'] });
    expect(agent.securityContext).toMatchObject({ privileged: true, runAsUser: 0 });
    expect(envOf(agent)).toMatchObject({
      VTL_EMULATOR_UNIT: 'container',
      VTL_HOST_POWER: 'sentinel:/host/reboot/reboot-required',
      VTL_HEALTH_PORT: '9465',
    });
    expect(agent.volumeMounts).toContainEqual({ name: 'reboot', mountPath: '/host/reboot' });
    expect(pod.volumes).toContainEqual({ name: 'reboot', hostPath: { path: '/var/run', type: 'Directory' } });

    expect(emulator).toMatchObject({ name: 'emulator', args: ['emulator'] });
    expect(emulator.securityContext.privileged).toBeUndefined();
    expect(emulator.securityContext.capabilities.drop).toEqual(['ALL']);
    expect(emulator.ports).toContainEqual(expect.objectContaining({ name: 'iscsi', hostPort: 3260 }));
    expect(emulator.livenessProbe.exec.command).toEqual(['vtl', 'emulator', '--probe']);
    // Both see the same state directory (config file, control socket) and pool paths.
    const mounts = (c: any) => c.volumeMounts.map((m: any) => `${m.name}:${m.mountPath}`);
    expect(mounts(agent)).toEqual(expect.arrayContaining(mounts(emulator)));
    expect(mounts(emulator)).toEqual(expect.arrayContaining(['state:/var/lib/vtl', 'pool-0:/srv/vtl']));
  });

  it('multi-node: a nodeagent pod on every labelled node, each with its node name and its own address', async () => {
    const ds = find(installed, 'DaemonSet', 'vtl-nodeagent')!;
    const pod = ds.spec.template.spec;
    // A DaemonSet: one pod per appliance node, picked by the node label, never two on a node.
    expect(pod.nodeSelector).toEqual({ 'vtl.appliance.io/node': 'true' });
    expect(ds.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    const [agent, emulator] = pod.containers;
    const env = envOf(agent);
    // The node name keys the node's status, pools and target name; the address is the node's,
    // so each node's portal in the status view is one hosts can reach.
    expect(env.VTL_NODE).toEqual({ fieldRef: { fieldPath: 'spec.nodeName' } });
    expect(env.VTL_BIND).toEqual({ fieldRef: { fieldPath: 'status.hostIP' } });
    // The node's own state (emulator configuration and socket) and pools: host paths of that node.
    expect(pod.volumes).toContainEqual({
      name: 'state',
      hostPath: { path: '/var/lib/vtl', type: 'DirectoryOrCreate' },
    });
    expect(emulator.ports).toContainEqual(expect.objectContaining({ hostPort: 3260 }));
    // Every controller and apiserver replica sees the whole appliance: no node pinning.
    for (const name of ['vtl-apiserver', 'vtl-controller'])
      expect(find(installed, 'Deployment', name)!.spec.template.spec.nodeSelector).toBeUndefined();
  });

  it('NOTES.txt says how to read the admin password and how to label the namespace', async () => {
    const notes = await renderNotes({ existing: generatedSecrets });
    expect(notes).toContain("kubectl -n vtl get secret vtl-admin -o jsonpath='{.data.password}' | base64 -d");
    expect(notes).toContain('kubectl label namespace vtl pod-security.kubernetes.io/enforce=privileged');
    expect(notes).toContain('/var/run/reboot-required');
    expect(notes).toContain('POST /api/pools with "node": "<node name>"');
  });
});

describe('generated secrets are made once', () => {
  it('an upgrade keeps the admin password, sealing key and both TLS pairs; a new install makes new ones', async () => {
    const secrets = generatedSecrets;
    expect(secrets).toHaveLength(4);
    const upgraded = await renderChart({ existing: secrets, upgrade: true });
    for (const s of secrets)
      expect(find(upgraded, 'Secret', s.metadata.name)!.data, s.metadata.name).toEqual(s.data);
    const other = await renderChart();
    for (const s of secrets)
      expect(find(other, 'Secret', s.metadata.name)!.data, s.metadata.name).not.toEqual(s.data);
  });
});

describe('the chart over a matrix of values', () => {
  const cases: [string, Record<string, unknown>, (objs: K8sObject[]) => void][] = [
    [
      'three etcd members',
      { etcd: { replicaCount: 3, persistence: { enabled: false } } },
      (objs) => {
        expect(find(objs, 'StatefulSet', 'vtl-etcd')!.spec.replicas).toBe(3);
        expect(find(objs, 'PodDisruptionBudget', 'vtl-etcd')!.spec.minAvailable).toBe(2);
        const env = envOf(containers(find(objs, 'Deployment', 'vtl-controller')!)[0]);
        expect(env.VTL_ETCD_ENDPOINTS.split(',')).toHaveLength(3);
        expect(env.VTL_ETCD_ENDPOINTS).toMatch(
          /^https:\/\/vtl-etcd-0\.vtl-etcd-headless\.vtl\.svc\.cluster\.local:2379,/,
        );
      },
    ],
    [
      'an external etcd with its own TLS secret',
      {
        etcd: {
          enabled: false,
          externalEndpoints: ['https://etcd.example:2379'],
          tls: { existingSecret: 'my-etcd' },
        },
      },
      (objs) => {
        expect(objs.some((o) => o.metadata.name.startsWith('vtl-etcd'))).toBe(false);
        const api = find(objs, 'Deployment', 'vtl-apiserver')!;
        expect(envOf(containers(api)[0])).toMatchObject({
          VTL_ETCD_ENDPOINTS: 'https://etcd.example:2379',
          VTL_ETCD_CERT_FILE: '/etc/vtl/etcd/apiserver.crt',
        });
        expect(api.spec.template.spec.volumes).toContainEqual(
          expect.objectContaining({
            name: 'etcd-tls',
            secret: expect.objectContaining({ secretName: 'my-etcd' }),
          }),
        );
      },
    ],
    [
      'an external etcd in plaintext',
      { etcd: { enabled: false, externalEndpoints: ['http://etcd.example:2379'] } },
      (objs) => {
        const env = envOf(containers(find(objs, 'Deployment', 'vtl-controller')!)[0]);
        expect(env.VTL_ETCD_CERT_FILE).toBeUndefined();
      },
    ],
    [
      'the Kubernetes source with an API key, or without it',
      { gitops: { kubernetes: { apiKeySecret: 'vtl-gitops-key' } } },
      (objs) => {
        const [c] = containers(find(objs, 'Deployment', 'vtl-gitops')!);
        expect(envOf(c)).toMatchObject({ VTL_API_KEY_FILE: '/etc/vtl/gitops-key/apiKey' });
        expect(envOf(c).VTL_API_PASSWORD_FILE).toBeUndefined();
        const volumes = find(objs, 'Deployment', 'vtl-gitops')!.spec.template.spec.volumes;
        expect(volumes).toContainEqual(
          expect.objectContaining({ secret: expect.objectContaining({ secretName: 'vtl-gitops-key' }) }),
        );
        expect(JSON.stringify(volumes)).not.toContain('vtl-admin');
      },
    ],
    [
      'no Kubernetes source',
      { gitops: { kubernetes: { enabled: false } } },
      (objs) => expect(find(objs, 'Deployment', 'vtl-gitops')).toBeUndefined(),
    ],
    [
      'no CRDs',
      { crds: { enabled: false } },
      (objs) => expect(objs.some((o) => o.kind === 'CustomResourceDefinition')).toBe(false),
    ],
    [
      'CRDs removed on uninstall',
      { crds: { keep: false } },
      (objs) => {
        const crds = objs.filter((o) => o.kind === 'CustomResourceDefinition');
        expect(crds).toHaveLength(5);
        for (const crd of crds) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
      },
    ],
    [
      'a ServiceMonitor',
      { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } } },
      (objs) => {
        const sm = find(objs, 'ServiceMonitor', 'vtl-apiserver')!;
        expect(sm.metadata.labels?.release).toBe('prom');
        expect(sm.spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '30s' }]);
      },
    ],
    [
      'the namespace rendered with its PodSecurity label',
      { namespace: { create: true } },
      (objs) => {
        const ns = find(objs, 'Namespace', 'vtl')!;
        expect(ns.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('privileged');
      },
    ],
    [
      'single replicas and no PDBs',
      { apiserver: { replicaCount: 1 }, podDisruptionBudget: { enabled: true } },
      (objs) => {
        expect(find(objs, 'PodDisruptionBudget', 'vtl-apiserver')).toBeUndefined();
        expect(find(objs, 'PodDisruptionBudget', 'vtl-controller')).toBeDefined();
      },
    ],
    [
      'PDBs off',
      { podDisruptionBudget: { enabled: false } },
      (objs) => expect(objs.some((o) => o.kind === 'PodDisruptionBudget')).toBe(false),
    ],
    [
      "the operator's own admin Secret",
      { admin: { existingSecret: 'mine' } },
      (objs) => {
        expect(find(objs, 'Secret', 'vtl-admin')).toBeUndefined();
        expect(find(objs, 'Deployment', 'vtl-apiserver')!.spec.template.spec.volumes).toContainEqual(
          expect.objectContaining({ name: 'admin', secret: expect.objectContaining({ secretName: 'mine' }) }),
        );
      },
    ],
    [
      'the iSCSI target on every address of a node',
      { nodeagent: { bind: '0.0.0.0' } },
      (objs) => {
        const [agent] = containers(find(objs, 'DaemonSet', 'vtl-nodeagent')!);
        expect(envOf(agent).VTL_BIND).toBe('0.0.0.0');
      },
    ],
    [
      'no plaintext port',
      { apiserver: { plain: { enabled: false } } },
      (objs) => {
        const [c] = containers(find(objs, 'Deployment', 'vtl-apiserver')!);
        expect(c.readinessProbe.httpGet).toMatchObject({ port: 'https', scheme: 'HTTPS' });
        expect(envOf(c).VTL_PLAIN_PORT).toBe('0');
      },
    ],
    [
      'an upstream etcd image and another reboot sentinel',
      {
        etcd: { image: { repository: 'registry.example/etcd', tag: 'v3.5.17' } },
        nodeagent: { rebootSentinel: '/run/vtl/reboot' },
      },
      (objs) => {
        expect(containers(find(objs, 'StatefulSet', 'vtl-etcd')!)[0].image).toBe(
          'registry.example/etcd:v3.5.17',
        );
        const pod = find(objs, 'DaemonSet', 'vtl-nodeagent')!.spec.template.spec;
        expect(envOf(pod.containers[0]).VTL_HOST_POWER).toBe('sentinel:/host/reboot/reboot');
        expect(pod.volumes).toContainEqual({
          name: 'reboot',
          hostPath: { path: '/run/vtl', type: 'Directory' },
        });
      },
    ],
    [
      'shared storage: the host /dev, and the state directory shared with the host both ways',
      { nodeagent: { sharedStorage: { enabled: true } } },
      (objs) => {
        const pod = find(objs, 'DaemonSet', 'vtl-nodeagent')!.spec.template.spec;
        const [agent, emulator] = pod.containers;
        const state = (c: any) => c.volumeMounts.find((m: any) => m.name === 'state');
        expect(state(agent)).toEqual({
          name: 'state',
          mountPath: '/var/lib/vtl',
          mountPropagation: 'Bidirectional',
        });
        expect(state(emulator)).toEqual({
          name: 'state',
          mountPath: '/var/lib/vtl',
          mountPropagation: 'HostToContainer',
        });
        expect(agent.volumeMounts).toContainEqual({ name: 'dev', mountPath: '/dev' });
        expect(agent.env).toContainEqual({ name: 'VTL_DEDUP_MAX_PAUSE_MINUTES', value: '30' });
        expect(pod.volumes).toContainEqual({ name: 'dev', hostPath: { path: '/dev', type: 'Directory' } });
        // Without it (the default), neither: the state directory stays private to the pod.
        const plain = find(installed, 'DaemonSet', 'vtl-nodeagent')!.spec.template.spec;
        expect(state(plain.containers[0]).mountPropagation).toBeUndefined();
        expect(plain.volumes.map((v: any) => v.name)).not.toContain('dev');
      },
    ],
  ];

  it.each(cases)('%s', async (_name, values, check) => {
    const objs = await render(values);
    checkInvariants(objs);
    check(objs);
  });

  it.each([
    [
      'two etcd members',
      { etcd: { replicaCount: 2 } },
      /etcd\.replicaCount must be one of the following: 1, 3/,
    ],
    ['an unknown value', { etcd: { replicas: 3 } }, /Additional property replicas is not allowed/],
    ['a relative reboot sentinel', { nodeagent: { rebootSentinel: 'reboot' } }, /nodeagent\.rebootSentinel/],
    ['a bad pull policy', { image: { pullPolicy: 'Sometimes' } }, /image\.pullPolicy must be one of/],
    [
      'a ServiceMonitor without the plain port',
      { metrics: { serviceMonitor: { enabled: true } }, apiserver: { plain: { enabled: false } } },
      /serviceMonitor\.enabled needs apiserver\.plain\.enabled/,
    ],
    ['no etcd at all', { etcd: { enabled: false } }, /set etcd\.externalEndpoints/],
  ])('refuses %s', async (_name, values, message) => {
    await expect(render(values)).rejects.toThrow(message);
  });
});
