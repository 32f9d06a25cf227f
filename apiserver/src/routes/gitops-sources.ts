import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { GitSourceSecret, VtlError, conflict, isoNow, keys, notFound } from '@vtl/api';
import {
  createGitSource,
  deleteGitSource,
  newSourceSecret,
  removeSourceSecret,
  replaceSourceCredential,
  requestPoll,
  updateGitSource,
} from '@vtl/domain';
import {
  CreateSourceRequest,
  CreateSourceResponse,
  GitSourceRecord,
  SourceName,
  SourceStatus,
  SourceView,
  UpdateSourceRequest,
  emptySourceStatus,
} from '@vtl/gitops';
import type { Store } from '@vtl/store';
import type { AppContext } from '../context.js';
import { releaseOwnership } from '../services/gitops-ownership.js';

const Params = z.object({ name: SourceName });

async function sourceView(store: Store, record: GitSourceRecord): Promise<SourceView> {
  const status = await store.get(keys.gitopsSourceStatus.one(record.name), SourceStatus);
  return { ...record, status: status?.value ?? emptySourceStatus() };
}

async function findSource(store: Store, name: string): Promise<GitSourceRecord> {
  const found = await store.get(keys.gitopsSources.one(name), GitSourceRecord);
  if (!found) throw notFound(`No Git source "${name}"; GET /api/gitops/sources lists them.`);
  return found.value;
}

/** How a source's credential is recorded: its kind (and secret's name) in the record, values sealed apart. */
function credentialOf(c: CreateSourceRequest['credential'] | null | undefined): {
  credential: GitSourceRecord['credential'];
  secret_ref: string | undefined;
  secret: Omit<GitSourceSecret, 'webhook_secret'>;
} {
  if (!c) return { credential: 'none', secret_ref: undefined, secret: {} };
  if ('secret_ref' in c) return { credential: 'secret_ref', secret_ref: c.secret_ref, secret: {} };
  if ('https_token' in c)
    return { credential: 'https_token', secret_ref: undefined, secret: { https_token: c.https_token } };
  return {
    credential: 'ssh_key',
    secret_ref: undefined,
    secret: { ssh_key: c.ssh_key, ...(c.known_hosts ? { known_hosts: c.known_hosts } : {}) },
  };
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Whether a webhook call carries the source's secret: GitHub's and Gitea's HMAC-SHA256 of the raw
 * body (X-Hub-Signature-256 `sha256=<hex>`, X-Gitea-Signature `<hex>`), or the secret itself as
 * GitLab sends it (X-Gitlab-Token) or as X-Vtl-Webhook-Token.
 */
function webhookAuthentic(request: FastifyRequest, raw: Buffer, secret: string): boolean {
  const h = request.headers;
  const hmac = createHmac('sha256', secret).update(raw).digest('hex');
  const header = (name: string) => (typeof h[name] === 'string' ? (h[name] as string) : undefined);
  const hub = header('x-hub-signature-256');
  if (hub) return same(hub, `sha256=${hmac}`);
  const gitea = header('x-gitea-signature');
  if (gitea) return same(gitea, hmac);
  const token = header('x-gitlab-token') ?? header('x-vtl-webhook-token');
  return token !== undefined && same(token, secret);
}

/** The webhook's one refusal: an unknown source and a wrong signature answer alike. */
const unauthorizedHook = () =>
  new VtlError(
    'unauthorized',
    "The webhook signature or token does not match this source's webhook secret (shown when the source was created).",
  );

/** Git sources (docs/gitops.md): what the leader controller polls, and the webhook that polls now. */
export async function gitopsSourceRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.get(
    '/api/gitops/sources',
    {
      schema: { response: { 200: z.array(SourceView) } },
      config: { role: 'read-only', doc: { summary: 'Git sources with their applied revision and outcome' } },
    },
    async () => {
      const listed = await store.list(keys.gitopsSources.prefix, GitSourceRecord);
      return Promise.all(listed.items.map((i) => sourceView(store, i.value)));
    },
  );

  r.get(
    '/api/gitops/sources/:name',
    {
      schema: { params: Params, response: { 200: SourceView } },
      config: { role: 'read-only', doc: { summary: 'One Git source and its status' } },
    },
    async (request) => sourceView(store, await findSource(store, request.params.name)),
  );

  r.post(
    '/api/gitops/sources',
    {
      schema: { body: CreateSourceRequest, response: { 201: CreateSourceResponse } },
      config: {
        role: 'admin',
        action: 'gitops.source.create',
        doc: { summary: 'Register a Git source; the answer shows its webhook secret once', status: 201 },
      },
    },
    async (request, reply) => {
      const { credential, ...body } = request.body;
      request.auditSubject = body.name;
      const cred = credentialOf(credential);
      const record: GitSourceRecord = {
        ...body,
        credential: cred.credential,
        ...(cred.secret_ref ? { secret_ref: cred.secret_ref } : {}),
        created_at: isoNow(),
      };
      const secret = newSourceSecret(body.name, cred.secret);
      if (!(await createGitSource(store, record, secret.write)))
        throw conflict(`A Git source named "${body.name}" exists already; change it with PUT.`);
      await ctx.journal.emit({
        kind: 'gitops_source_created',
        subject: body.name,
        detail: `${record.url} ${record.branch}:${record.path}`,
      });
      reply.status(201);
      return { ...(await sourceView(store, record)), webhook_secret: secret.webhook_secret };
    },
  );

  r.put(
    '/api/gitops/sources/:name',
    {
      schema: { params: Params, body: UpdateSourceRequest, response: { 200: SourceView } },
      config: { role: 'admin', action: 'gitops.source.update', doc: { summary: 'Change a Git source' } },
    },
    async (request) => {
      const { name } = request.params;
      request.auditSubject = name;
      const { credential, ...fields } = request.body;
      const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
      const cred = credential === undefined ? undefined : credentialOf(credential);
      const updated = await updateGitSource(
        store,
        name,
        GitSourceRecord,
        (current) => {
          const next: GitSourceRecord = { ...current, ...defined } as GitSourceRecord;
          if (fields.ca_cert === null) delete next.ca_cert;
          if (cred) {
            next.credential = cred.credential;
            if (cred.secret_ref) next.secret_ref = cred.secret_ref;
            else delete next.secret_ref;
          }
          return next;
        },
        cred && (await replaceSourceCredential(store, name, cred.secret)),
      );
      if (!updated) throw notFound(`No Git source "${name}"; GET /api/gitops/sources lists them.`);
      return sourceView(store, updated);
    },
  );

  r.delete(
    '/api/gitops/sources/:name',
    {
      schema: { params: Params },
      config: {
        role: 'admin',
        action: 'gitops.source.delete',
        doc: { summary: 'Delete a Git source; what it created stays and becomes unowned (never pruned)' },
      },
    },
    async (request) => {
      const { name } = request.params;
      request.auditSubject = name;
      if (!(await deleteGitSource(store, name, removeSourceSecret(name))))
        throw notFound(`No Git source "${name}"; GET /api/gitops/sources lists them.`);
      const released = await releaseOwnership(store, name);
      await ctx.journal.emit({
        kind: 'gitops_source_deleted',
        subject: name,
        detail: `${released} object(s) left in place, now unowned`,
      });
      return { ok: true, released };
    },
  );

  // The webhook reads its body raw: the signature is over the exact bytes the Git server sent.
  await app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) =>
      done(null, body),
    );
    child.post<{ Params: { name: string } }>(
      '/api/gitops/sources/:name/webhook',
      {
        config: {
          role: 'public',
          action: 'gitops.source.webhook',
          doc: {
            summary: 'Poll a Git source now; authenticated by its webhook secret (HMAC or token)',
            status: 202,
          },
        },
      },
      async (request, reply) => {
        const parsed = Params.safeParse(request.params);
        const name = parsed.success ? parsed.data.name : '';
        request.auditSubject = name;
        const secret = name
          ? await store.get(keys.gitopsSourceSecrets.one(name), GitSourceSecret)
          : undefined;
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        // An unknown source and a wrong signature answer alike, so the endpoint names no source.
        if (!secret || !webhookAuthentic(request, raw, secret.value.webhook_secret)) throw unauthorizedHook();
        // A source deleted since its secret was read answers as an unknown one.
        if (!(await requestPoll(store, name))) throw unauthorizedHook();
        reply.status(202);
        return {
          ok: true,
          source: name,
          detail: 'A poll was requested; GET /api/gitops/sources/' + name + ' shows its outcome.',
        };
      },
    );
  });
}
