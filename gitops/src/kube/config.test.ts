import { describe, expect, it } from 'vitest';
import { CreateSourceRequest, SOURCE_NAME, kubernetesSourceName } from '../contract.js';
import { loadConfig } from './config.js';

const env = (over: Record<string, string> = {}) => ({
  VTL_KUBE_NAMESPACE: 'backup',
  VTL_API_URL: 'https://vtl:8443',
  VTL_API_KEY: 'k',
  ...over,
});

describe('the Kubernetes source name', () => {
  it('is kubernetes-<namespace>, audited as gitops:kubernetes-<namespace>', () => {
    expect(loadConfig(env()).source).toBe('kubernetes-backup');
  });

  it('stays a source name (63 characters) for the longest namespaces, and distinct', () => {
    const a = `${'a'.repeat(50)}-one-${'x'.repeat(8)}`;
    const b = `${'a'.repeat(50)}-two-${'x'.repeat(8)}`;
    expect(a.length).toBe(63);
    for (const ns of [a, b]) expect(kubernetesSourceName(ns)).toMatch(SOURCE_NAME);
    expect(kubernetesSourceName(a)).not.toBe(kubernetesSourceName(b));
    expect(kubernetesSourceName(a).startsWith('kubernetes-aaaa')).toBe(true);
  });

  it('refuses an override that is not a source name, and Git sources under the reserved prefix', () => {
    expect(() => loadConfig(env({ VTL_GITOPS_SOURCE: 'kubernetes:backup' }))).toThrow(/not a source name/);
    const git = CreateSourceRequest.safeParse({ name: 'kubernetes-backup', url: 'https://g/r.git' });
    expect(git.success).toBe(false);
    expect(git.error?.issues[0]?.message).toMatch(/reserved for the Kubernetes sources/);
  });
});
