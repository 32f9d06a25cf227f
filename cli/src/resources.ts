import { age, type Column } from './table.js';

// Rows are the REST shapes of docs/api.md and the spec, read untyped as a user reads JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Row = any;

/** Names of what rows refer to by id: libraries, pools and remotes (`#<id>` for one not listed). */
export interface Names {
  library: (id: unknown) => string | undefined;
  pool: (id: unknown) => string | undefined;
  remote: (id: unknown) => string | undefined;
}

/** A row as a manifest `vtl apply` takes back (docs/gitops.md), for the kinds GitOps declares. */
export type ToManifest = (row: Row, names: Names) => { kind: string; name: string; spec: Row };

/** One kind `vtl get` lists: where its rows come from, how a NAME finds one, its table. */
export interface ResourceType {
  plural: string;
  aliases: string[];
  path: string;
  /** Rows out of the answer (the targets view nests the initiators). */
  rows: (body: Row) => Row[];
  /** Whether `name` (as typed) names this row. */
  matches: (row: Row, name: string) => boolean;
  /** The row's name as `vtl get -o name` and `describe` say it. */
  name: (row: Row) => string;
  /** The table's columns; ids of other objects shown by their names. */
  columns: (names: Names) => Column<Row>[];
  manifest?: ToManifest;
  /** How `vtl delete` removes one row: the request (DELETE unless said). */
  remove?: (row: Row) => { path: string; body?: unknown; method?: 'DELETE' | 'POST' };
}

const gb = (bytes: unknown) => (typeof bytes === 'number' ? `${(bytes / 1e9).toFixed(1)}G` : undefined);
const scope = (v: unknown) => (v === '' ? '<all>' : v === '-' ? '<none>' : v);
const scopeList = (v: string) => (v === '' ? undefined : v === '-' ? [] : v.split(','));

export const RESOURCE_TYPES: ResourceType[] = [
  {
    plural: 'pools',
    aliases: ['pool', 'pools'],
    path: '/api/pools',
    rows: (b) => b,
    matches: (r, n) => r.name === n || String(r.id) === n,
    name: (r) => r.name,
    columns: (names) => [
      { header: 'NAME', cell: (r) => r.name },
      { header: 'NODE', cell: (r) => r.node },
      { header: 'PATH', cell: (r) => r.path },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'LIBRARY', cell: (r) => (r.library === null ? undefined : names.library(r.library)) },
      { header: 'USED', cell: (r) => gb(r.figures?.fs_used_bytes), wide: true },
      { header: 'ID', cell: (r) => r.id, wide: true },
      { header: 'DETAIL', cell: (r) => r.detail, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
    manifest: (r) => ({ kind: 'TapePool', name: r.name, spec: { node: r.node, path: r.path } }),
    remove: (r) => ({ path: `/api/pools/${r.id}` }),
  },
  {
    plural: 'libraries',
    aliases: ['library', 'libraries', 'lib', 'libs'],
    path: '/api/libraries',
    rows: (b) => b,
    matches: (r, n) => r.name === n || r.serial === n || String(r.id) === n,
    name: (r) => r.name,
    columns: (names) => [
      { header: 'NAME', cell: (r) => r.name },
      { header: 'PRODUCT', cell: (r) => r.product },
      { header: 'DRIVE', cell: (r) => r.drive_model },
      { header: 'DRIVES', cell: (r) => r.num_drives },
      { header: 'PREFIX', cell: (r) => r.label_prefix },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'POOL', cell: (r) => names.pool(r.home_pool) },
      { header: 'ID', cell: (r) => r.id, wide: true },
      { header: 'SERIAL', cell: (r) => r.serial, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
    manifest: (r, n) => ({
      kind: 'VirtualTapeLibrary',
      name: r.name,
      spec: {
        product: r.product,
        driveProduct: r.drive_model,
        numDrives: r.num_drives,
        numSlots: r.num_slots,
        numMap: r.num_ie,
        labelPrefix: r.label_prefix,
        poolRef: n.pool(r.home_pool),
      },
    }),
    remove: (r) => ({
      path: `/api/libraries/${r.id}`,
      body: { confirm: r.name, acknowledge: 'I understand' },
    }),
  },
  {
    plural: 'cartridges',
    aliases: ['cartridge', 'cartridges', 'cart', 'carts'],
    path: '/api/cartridges',
    rows: (b) => b,
    matches: (r, n) => r.label === n.toUpperCase(),
    name: (r) => r.label,
    columns: (names) => [
      { header: 'LABEL', cell: (r) => r.label },
      { header: 'LIBRARY', cell: (r) => names.library(r.library) },
      { header: 'LOCATION', cell: (r) => r.location },
      { header: 'STATE', cell: (r) => r.local_state },
      { header: 'WRITTEN', cell: (r) => gb(r.size_bytes) },
      { header: 'CAPACITY', cell: (r) => (r.capacity_bytes ? gb(r.capacity_bytes) : undefined) },
      { header: 'ON DISK', cell: (r) => gb(r.phys_bytes), wide: true },
      { header: 'LAST EXPORT', cell: (r) => r.last_export_gen, wide: true },
      { header: 'MODIFIED', cell: (r) => age(r.modified) },
    ],
    remove: (r) => ({ path: `/api/cartridges/${r.label}`, body: { confirm: r.label } }),
  },
  {
    plural: 'initiators',
    aliases: ['initiator', 'initiators', 'init'],
    path: '/api/targets',
    rows: (b) => b.initiators ?? [],
    matches: (r, n) => r.wwpn === n || r.alias === n,
    name: (r) => r.alias || r.wwpn,
    columns: (names) => [
      { header: 'WWPN', cell: (r) => r.wwpn },
      { header: 'ALIAS', cell: (r) => r.alias },
      { header: 'FABRIC', cell: (r) => r.fabric },
      { header: 'LOGGED-IN', cell: (r) => r.logged_in },
      { header: 'APPLIED', cell: (r) => r.applied },
      { header: 'PORTS', cell: (r) => scope(r.ports), wide: true },
      {
        header: 'LIBRARIES',
        cell: (r) =>
          scope(
            scopeList(r.libraries)
              ?.map((id) => names.library(Number(id)))
              .join(',') ?? '',
          ),
        wide: true,
      },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
    manifest: (r, n) => {
      const ports = scopeList(r.ports);
      const libraries = scopeList(r.libraries)?.map((id) => n.library(Number(id)));
      const name = manifestName(r.alias || r.wwpn);
      // CHAP secrets never leave the appliance: the manifest names the GitOps secret to hold them,
      // so applying it back keeps CHAP on (a manifest without chap would turn it off).
      const secretRef = (key: string) => ({ name: `${name}-chap`, key });
      const chap = r.chap?.enabled
        ? {
            username: r.chap.username,
            secretRef: secretRef('secret'),
            ...(r.chap.mutual
              ? { mutualUsername: r.chap.mutual_username, mutualSecretRef: secretRef('mutualSecret') }
              : {}),
          }
        : undefined;
      return {
        kind: 'TapeInitiator',
        name,
        spec: {
          wwpn: r.wwpn,
          fabric: r.fabric,
          ...(r.alias ? { alias: r.alias } : {}),
          ...(ports ? { ports } : {}),
          ...(libraries ? { libraryRefs: libraries } : {}),
          ...(chap ? { chap } : {}),
        },
      };
    },
    remove: (r) => ({ path: `/api/targets/acls/${encodeURIComponent(r.wwpn)}` }),
  },
  {
    plural: 'remotes',
    aliases: ['remote', 'remotes'],
    path: '/api/remotes',
    rows: (b) => b,
    matches: (r, n) => r.name === n || String(r.id) === n,
    name: (r) => r.name,
    columns: () => [
      { header: 'NAME', cell: (r) => r.name },
      { header: 'ENDPOINT', cell: (r) => r.endpoint },
      { header: 'BUCKET', cell: (r) => r.bucket },
      { header: 'PREFIX', cell: (r) => r.prefix },
      { header: 'TESTED', cell: (r) => (r.last_test_at ? r.last_test_ok : undefined) },
      { header: 'ID', cell: (r) => r.id, wide: true },
      { header: 'REGION', cell: (r) => r.region, wide: true },
      { header: 'TEST DETAIL', cell: (r) => r.last_test_detail, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
    manifest: (r) => ({
      kind: 'TapeRemote',
      name: r.name,
      spec: {
        endpoint: r.endpoint,
        region: r.region,
        bucket: r.bucket,
        prefix: r.prefix,
        accessKey: r.access_key,
        useSsl: r.use_ssl,
        pathStyle: r.path_style,
        // The secret key never leaves the appliance: name the GitOps secret that holds it.
        secretRef: { name: `${r.name}-s3`, key: 'secretAccessKey' },
      },
    }),
    remove: (r) => ({ path: `/api/remotes/${r.id}` }),
  },
  {
    plural: 'jobs',
    aliases: ['job', 'jobs'],
    path: '/api/jobs',
    rows: (b) => b,
    matches: (r, n) => String(r.id) === n,
    name: (r) => String(r.id),
    columns: (names) => [
      { header: 'ID', cell: (r) => r.id },
      { header: 'KIND', cell: (r) => r.kind },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'LABEL', cell: (r) => r.label },
      { header: 'REMOTE', cell: (r) => names.remote(r.remote_id) },
      { header: 'DONE', cell: (r) => gb(r.bytes_done) },
      { header: 'GENERATION', cell: (r) => r.generation, wide: true },
      { header: 'DETAIL', cell: (r) => r.error || r.detail, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
    // A job is not deleted: it is cancelled (while it has not finished).
    remove: (r) => ({ path: `/api/jobs/${r.id}/cancel`, method: 'POST' }),
  },
];

/** A metadata.name from an alias or IQN: lower-case DNS label characters. */
const manifestName = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'initiator';

/** The resource type a user typed (any of its aliases), or undefined. */
export const resourceType = (typed: string) =>
  RESOURCE_TYPES.find((t) => t.aliases.includes(typed.toLowerCase()));
