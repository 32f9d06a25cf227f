import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { conflict, isoNow, keys, nameFromKey, notFound } from '@vtl/api';
import { GitSourceRecord, PutSecretRequest, SecretName, SecretView, StoredSecret } from '@vtl/gitops';
import type { AppContext } from '../context.js';

const view = (name: string, s: StoredSecret): SecretView => ({
  name,
  keys: Object.keys(s.data).sort(),
  updated_at: s.updated_at,
});

/**
 * Secrets that declared objects name by `secretRef` (docs/gitops.md): registered here, sealed in
 * etcd like every record under /vtl/secrets/, and write-only: reads show names and keys, never values.
 */
export async function gitopsSecretRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.get(
    '/api/gitops/secrets',
    {
      schema: { response: { 200: z.array(SecretView) } },
      config: { role: 'read-only', doc: { summary: 'Registered secrets: names and keys, never values' } },
    },
    async () => {
      // Listing reads the sealed records to name their keys; values never leave this handler.
      const listed = await store.list(keys.gitopsSecrets.prefix, StoredSecret);
      return listed.items.map((i) => view(nameFromKey(i.key), i.value));
    },
  );

  r.put(
    '/api/gitops/secrets/:name',
    {
      schema: {
        params: z.object({ name: SecretName }),
        body: PutSecretRequest,
        response: { 200: SecretView },
      },
      config: {
        role: 'admin',
        action: 'gitops.secret.put',
        doc: { summary: 'Register or replace a secret (write-only) for secretRef' },
      },
    },
    async (request) => {
      const { name } = request.params;
      request.auditSubject = name;
      const record: StoredSecret = { data: request.body.data, updated_at: isoNow() };
      await store.put(keys.gitopsSecrets.one(name), record);
      await ctx.journal.emit({
        kind: 'gitops_secret_set',
        subject: name,
        detail: `keys ${Object.keys(record.data).sort().join(', ')}`,
      });
      return view(name, record);
    },
  );

  r.delete(
    '/api/gitops/secrets/:name',
    {
      schema: { params: z.object({ name: SecretName }) },
      config: {
        role: 'admin',
        action: 'gitops.secret.delete',
        doc: { summary: 'Delete a secret; a sync that still references it is refused and names it' },
      },
    },
    async (request) => {
      const { name } = request.params;
      request.auditSubject = name;
      // A Git source fetching with it would fail at its next poll: say which, and change nothing.
      const sources = await store.list(keys.gitopsSources.prefix, GitSourceRecord);
      const users = sources.items.filter((i) => i.value.secret_ref === name).map((i) => i.value.name);
      if (users.length > 0)
        throw conflict(
          `Secret "${name}" is the credential of Git source(s) ${users.join(', ')}; give them another credential (PUT /api/gitops/sources/{name}) first.`,
        );
      if (!(await store.delete(keys.gitopsSecrets.one(name))))
        throw notFound(`No secret "${name}"; GET /api/gitops/secrets lists them.`);
      await ctx.journal.emit({ kind: 'gitops_secret_deleted', subject: name, detail: '' });
      return { ok: true };
    },
  );
}
