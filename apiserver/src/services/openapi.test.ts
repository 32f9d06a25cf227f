import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiSnapshot } from '../openapi-snapshot.js';

const root = path.resolve(import.meta.dirname, '../../..');

interface Operation {
  operationId: string;
  tags: string[];
  description: string;
  requestBody?: {
    content: Record<string, { schema: unknown; examples?: Record<string, { value: unknown }> }>;
  };
}
interface Document {
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

let doc: Document;
beforeAll(async () => {
  doc = (await openApiSnapshot()) as Document;
}, 60_000);

const operations = () =>
  Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([m, o]) => ({ path: p, method: m, ...o })),
  );

describe('the OpenAPI document', () => {
  it('names and tags every operation, once each, with tags that are described', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(50);
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of ops) {
      expect(o.operationId, `${o.method} ${o.path}`).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
      expect(o.tags, `${o.method} ${o.path}`).toHaveLength(1);
      expect(o.description).toBeTruthy();
    }
    expect(ids).toEqual(expect.arrayContaining(['getLibraries', 'postCartridges', 'getJobsById']));
    const described = new Set(doc.tags.map((t) => t.name));
    for (const o of ops) expect(described.has(o.tags[0]!), o.tags[0]).toBe(true);
    expect(doc.servers[0]?.url).toBe('/');
  });

  it('has a named component for every main resource, and the answers refer to them', () => {
    for (const name of [
      'Library',
      'Pool',
      'Cartridge',
      'Job',
      'Remote',
      'Event',
      'User',
      'Initiator',
      'ErrorBody',
    ])
      expect(doc.components.schemas[name], name).toBeDefined();
    const answer = (p: string) =>
      JSON.stringify((doc.paths[p]!.get as unknown as { responses: unknown }).responses);
    expect(answer('/api/libraries')).toContain('#/components/schemas/Library"');
    expect(answer('/api/jobs')).toContain('#/components/schemas/Job"');
    // Every reference resolves.
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[^"]+/g) ?? [];
    for (const ref of new Set(refs))
      expect(doc.components.schemas[ref.split('/').at(-1)!], ref).toBeDefined();
  });

  it('carries examples of the main requests that the routes accept', () => {
    const body = (p: string) => doc.paths[p]!.post!.requestBody!.content['application/json']!;
    for (const p of ['/api/auth/login', '/api/libraries', '/api/cartridges', '/api/pools'])
      expect(body(p).examples?.example?.value, p).toBeDefined();
  });

  it('passes @redocly/cli lint without an error or a warning', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc));
      const res = spawnSync(
        path.join(root, 'node_modules/.bin/redocly'),
        ['lint', file, '--format', 'json'],
        {
          encoding: 'utf8',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      );
      expect(res.error).toBeUndefined();
      const report = JSON.parse(res.stdout) as {
        totals: { errors: number; warnings: number };
        problems: unknown[];
      };
      expect(report.problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      expect(res.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
