import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GROUP, VERSION } from '../../model/index.js';
import { objectStore, type KubeObject, type StoreEvent } from './standin-store.js';

/**
 * TEST-ONLY stand-in for a kube-apiserver (none can be installed on the test machines): the
 * part of its HTTP protocol the adapter uses, for the vtl.appliance.io kinds and Secrets.
 *
 * - list (`GET .../<plural>`): items and the list's resourceVersion;
 * - watch (`?watch=true&resourceVersion=N`): ADDED/MODIFIED/DELETED after N as JSON lines,
 *   BOOKMARK events when `allowWatchBookmarks=true`, an ERROR event carrying a Status with
 *   code 410 (Gone) when N is older than the compacted history, then the stream ends;
 * - get, create (409 AlreadyExists), update (409 Conflict on a stale resourceVersion), delete;
 * - the status subresource: `PUT .../status` changes status only, the main resource ignores
 *   status; metadata.generation moves on spec changes only;
 * - finalizers: deleting an object that has some sets deletionTimestamp only; it goes once an
 *   update empties them.
 *
 * Not emulated: schema validation, defaulting and CEL rules of the CRDs, patch, field and label
 * selectors, authorization beyond one bearer token, server-side apply.
 */
export class KubeStandIn {
  readonly store = objectStore();
  private server: http.Server | undefined;
  private readonly watches = new Set<http.ServerResponse>();
  /** Every request, as `METHOD path?query`, for tests that check what the client sent. */
  readonly requests: string[] = [];
  /** What the watches sent: BOOKMARK events and 410 Gone errors. */
  readonly sent = { bookmarks: 0, gone: 0 };

  constructor(
    readonly token: string = randomUUID(),
    /** How often an idle watch gets a BOOKMARK (when it asked for them). */
    private readonly bookmarkMs = 500,
  ) {}

  /** Listens on a free port of 127.0.0.1; resolves with the server URL. */
  async start(): Promise<string> {
    const server = http.createServer((req, res) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.closeWatches();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Ends every open watch (as an API server restart or a load balancer would). */
  closeWatches(): void {
    for (const res of this.watches) res.end();
    this.watches.clear();
  }

  /**
   * Forgets the history (as etcd compaction or a new watch cache does) and ends the open watches:
   * a client that watches again from a resourceVersion it had gets 410 Gone and must list again.
   */
  expireHistory(): void {
    this.store.compact();
    this.closeWatches();
  }

  /** Puts a Secret (values as plain strings; stored base64 as the API does). */
  putSecret(namespace: string, name: string, data: Record<string, string>): void {
    const encoded = Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    );
    this.store.put('secrets', namespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      data: encoded,
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://standin');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return status(res, 401, 'Unauthorized', 'Unauthorized');
    const route = parsePath(url.pathname);
    if (!route)
      return status(
        res,
        404,
        'NotFound',
        `the server could not find the requested resource (${url.pathname})`,
      );
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = chunks.length
          ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject)
          : undefined;
        this.dispatch(req.method ?? 'GET', url, route, body, res);
      } catch (err) {
        status(res, 400, 'BadRequest', (err as Error).message);
      }
    });
  }

  private dispatch(
    method: string,
    url: URL,
    route: Route,
    body: KubeObject | undefined,
    res: http.ServerResponse,
  ) {
    const { plural, namespace, name, subresource } = route;
    const store = this.store;
    if (!name) {
      if (method === 'GET' && url.searchParams.get('watch') === 'true') return this.watch(url, route, res);
      if (method === 'GET') {
        const items = store.list(plural, namespace);
        return json(res, 200, {
          apiVersion: route.apiVersion,
          kind: `${listKind(plural)}`,
          metadata: { resourceVersion: String(store.revision) },
          items,
        });
      }
      if (method === 'POST') {
        if (!body?.metadata?.name) return status(res, 422, 'Invalid', 'metadata.name: Required value');
        if (store.get(plural, namespace, body.metadata.name))
          return status(res, 409, 'AlreadyExists', `${plural} "${body.metadata.name}" already exists`);
        return json(res, 201, store.create(plural, namespace, body));
      }
      return status(res, 405, 'MethodNotAllowed', `${method} is not supported here`);
    }
    const current = store.get(plural, namespace, name);
    if (!current) return status(res, 404, 'NotFound', `${plural} "${name}" not found`);
    if (method === 'GET') return json(res, 200, current);
    if (method === 'PUT') {
      if (!body) return status(res, 400, 'BadRequest', 'no body');
      const rv = body.metadata?.resourceVersion;
      if (rv && rv !== current.metadata.resourceVersion)
        return status(
          res,
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      return json(
        res,
        200,
        subresource === 'status'
          ? store.updateStatus(plural, current, body)
          : store.update(plural, current, body),
      );
    }
    if (method === 'DELETE') {
      if (subresource) return status(res, 405, 'MethodNotAllowed', 'cannot delete a subresource');
      return json(res, 200, store.delete(plural, current));
    }
    return status(res, 405, 'MethodNotAllowed', `${method} is not supported here`);
  }

  private watch(url: URL, route: Route, res: http.ServerResponse): void {
    const from = url.searchParams.get('resourceVersion') ?? '';
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true';
    const store = this.store;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const send = (type: string, object: unknown) => res.write(JSON.stringify({ type, object }) + '\n');
    const matches = (e: StoreEvent) => e.plural === route.plural && e.namespace === route.namespace;
    if (from === '' || from === '0') {
      // No resourceVersion: the current state as ADDED events, then changes.
      for (const obj of store.list(route.plural, route.namespace)) send('ADDED', obj);
    } else {
      const history = store.since(Number(from));
      if (history === undefined) {
        this.sent.gone += 1;
        send('ERROR', {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${from} (${store.compactedAt})`,
          reason: 'Expired',
          code: 410,
        });
        res.end();
        return;
      }
      for (const e of history.filter(matches)) send(e.type, e.object);
    }
    this.watches.add(res);
    const unsubscribe = store.subscribe((e) => {
      if (matches(e)) send(e.type, e.object);
    });
    const timer = bookmarks
      ? setInterval(
          () =>
            (this.sent.bookmarks += 1) &&
            send('BOOKMARK', {
              apiVersion: route.apiVersion,
              kind: kindOf(route.plural),
              metadata: { resourceVersion: String(store.revision) },
            }),
          this.bookmarkMs,
        )
      : undefined;
    const close = () => {
      unsubscribe();
      if (timer) clearInterval(timer);
      this.watches.delete(res);
    };
    res.on('close', close);
    res.on('finish', close);
  }
}

interface Route {
  apiVersion: string;
  plural: string;
  namespace: string;
  name?: string;
  subresource?: string;
}

const CUSTOM = new RegExp(
  `^/apis/${GROUP.replace(/\./g, '\\.')}/${VERSION}/namespaces/([^/]+)/([^/]+)(?:/([^/]+))?(?:/(status))?$`,
);
const CORE = /^\/api\/v1\/namespaces\/([^/]+)\/(secrets|events)(?:\/([^/]+))?$/;

function parsePath(pathname: string): Route | undefined {
  const custom = CUSTOM.exec(pathname);
  if (custom)
    return {
      apiVersion: `${GROUP}/${VERSION}`,
      namespace: custom[1]!,
      plural: custom[2]!,
      ...(custom[3] ? { name: decodeURIComponent(custom[3]) } : {}),
      ...(custom[4] ? { subresource: custom[4] } : {}),
    };
  const core = CORE.exec(pathname);
  if (core)
    return {
      apiVersion: 'v1',
      namespace: core[1]!,
      plural: core[2]!,
      ...(core[3] ? { name: decodeURIComponent(core[3]) } : {}),
    };
  return undefined;
}

const KINDS_BY_PLURAL: Record<string, string> = {
  tapepools: 'TapePool',
  taperemotes: 'TapeRemote',
  virtualtapelibraries: 'VirtualTapeLibrary',
  tapeinitiators: 'TapeInitiator',
  appliancesettings: 'ApplianceSettings',
  secrets: 'Secret',
  events: 'Event',
};
const kindOf = (plural: string) => KINDS_BY_PLURAL[plural] ?? plural;
const listKind = (plural: string) => `${kindOf(plural)}List`;

function json(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A metav1.Status error body, as the API server answers. */
function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
}
