import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { StoredSecret, keys, nameFromKey, notFound } from '@vtl/api';
import { deleteGitopsSecret, putGitopsSecret } from '@vtl/domain';
import { PutSecretRequest, SecretName, SecretView } from '@vtl/gitops';
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
      const record = await putGitopsSecret(store, name, request.body.data);
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
      // Refused (409, naming them) while a Git source fetches with it.
      if (!(await deleteGitopsSecret(store, name)))
        throw notFound(`No secret "${name}"; GET /api/gitops/secrets lists them.`);
      await ctx.journal.emit({ kind: 'gitops_secret_deleted', subject: name, detail: '' });
      return { ok: true };
    },
  );
}
