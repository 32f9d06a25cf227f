import { age, type Column } from './table.js';

// Rows are the REST shapes of docs/api.md and the spec, read untyped as a user reads JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = any;

/** One kind `vtl get` lists: where its rows come from, how a NAME finds one, its table. */
export interface ResourceType {
  plural: string;
  aliases: string[];
  path: string;
  /** Rows out of the answer (the targets view nests the initiators). */
  rows: (body: Row) => Row[];
  /** Whether `name` (as typed) names this row. */
  matches: (row: Row, name: string) => boolean;
  columns: Column<Row>[];
}

const gb = (bytes: unknown) => (typeof bytes === 'number' ? `${(bytes / 1e9).toFixed(1)}G` : undefined);
const scope = (v: unknown) => (v === '' ? '<all>' : v === '-' ? '<none>' : v);

export const RESOURCE_TYPES: ResourceType[] = [
  {
    plural: 'pools',
    aliases: ['pool', 'pools'],
    path: '/api/pools',
    rows: (b) => b,
    matches: (r, n) => r.name === n || String(r.id) === n,
    columns: [
      { header: 'NAME', cell: (r) => r.name },
      { header: 'NODE', cell: (r) => r.node },
      { header: 'PATH', cell: (r) => r.path },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'LIBRARY', cell: (r) => r.library },
      { header: 'USED', cell: (r) => gb(r.figures?.fs_used_bytes), wide: true },
      { header: 'ID', cell: (r) => r.id, wide: true },
      { header: 'DETAIL', cell: (r) => r.detail, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
  },
  {
    plural: 'libraries',
    aliases: ['library', 'libraries', 'lib', 'libs'],
    path: '/api/libraries',
    rows: (b) => b,
    matches: (r, n) => r.name === n || r.serial === n || String(r.id) === n,
    columns: [
      { header: 'NAME', cell: (r) => r.name },
      { header: 'PRODUCT', cell: (r) => r.product },
      { header: 'DRIVE', cell: (r) => r.drive_model },
      { header: 'DRIVES', cell: (r) => r.num_drives },
      { header: 'PREFIX', cell: (r) => r.label_prefix },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'ID', cell: (r) => r.id, wide: true },
      { header: 'SERIAL', cell: (r) => r.serial, wide: true },
      { header: 'POOL', cell: (r) => r.home_pool, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
  },
  {
    plural: 'cartridges',
    aliases: ['cartridge', 'cartridges', 'cart', 'carts'],
    path: '/api/cartridges',
    rows: (b) => b,
    matches: (r, n) => r.label === n.toUpperCase(),
    columns: [
      { header: 'LABEL', cell: (r) => r.label },
      { header: 'LIBRARY', cell: (r) => r.library },
      { header: 'LOCATION', cell: (r) => r.location },
      { header: 'STATE', cell: (r) => r.local_state },
      { header: 'WRITTEN', cell: (r) => gb(r.size_bytes) },
      { header: 'ON DISK', cell: (r) => gb(r.phys_bytes), wide: true },
      { header: 'LAST EXPORT', cell: (r) => r.last_export_gen, wide: true },
      { header: 'MODIFIED', cell: (r) => age(r.modified) },
    ],
  },
  {
    plural: 'initiators',
    aliases: ['initiator', 'initiators', 'init'],
    path: '/api/targets',
    rows: (b) => b.initiators ?? [],
    matches: (r, n) => r.wwpn === n || r.alias === n,
    columns: [
      { header: 'WWPN', cell: (r) => r.wwpn },
      { header: 'ALIAS', cell: (r) => r.alias },
      { header: 'FABRIC', cell: (r) => r.fabric },
      { header: 'LOGGED-IN', cell: (r) => r.logged_in },
      { header: 'APPLIED', cell: (r) => r.applied },
      { header: 'PORTS', cell: (r) => scope(r.ports), wide: true },
      { header: 'LIBRARIES', cell: (r) => scope(r.libraries), wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
  },
  {
    plural: 'remotes',
    aliases: ['remote', 'remotes'],
    path: '/api/remotes',
    rows: (b) => b,
    matches: (r, n) => r.name === n || String(r.id) === n,
    columns: [
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
  },
  {
    plural: 'jobs',
    aliases: ['job', 'jobs'],
    path: '/api/jobs',
    rows: (b) => b,
    matches: (r, n) => String(r.id) === n,
    columns: [
      { header: 'ID', cell: (r) => r.id },
      { header: 'KIND', cell: (r) => r.kind },
      { header: 'STATE', cell: (r) => r.state },
      { header: 'LABEL', cell: (r) => r.label },
      { header: 'REMOTE', cell: (r) => r.remote_id },
      { header: 'GENERATION', cell: (r) => r.generation, wide: true },
      { header: 'DETAIL', cell: (r) => r.error || r.detail, wide: true },
      { header: 'AGE', cell: (r) => age(r.created_at) },
    ],
  },
];

/** The resource type a user typed (any of its aliases), or undefined. */
export const resourceType = (typed: string) =>
  RESOURCE_TYPES.find((t) => t.aliases.includes(typed.toLowerCase()));
