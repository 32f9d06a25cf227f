/**
 * What the OpenAPI document derives from a route's method and path, so that route files carry
 * only their schemas and summary: the operationId an SDK names its method after, the tag it
 * groups it under, and the example of the main requests' bodies.
 */

const words = (segment: string) => segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
const pascal = (segment: string) =>
  words(segment)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * `<method><Path>`, parameters as `By<Name>`: GET /api/libraries → getLibraries, POST
 * /api/libraries/:lib/drives/:index/load → postLibrariesByLibDrivesByIndexLoad. Unique per
 * route (openApiDocument refuses a repeat), stable across releases while the path is.
 */
export function operationId(method: string, url: string): string {
  const parts = url
    .split('/')
    .filter((s) => s && s !== 'api')
    .map((s) => (s.startsWith(':') ? `By${pascal(s.slice(1))}` : pascal(s)));
  return method.toLowerCase() + parts.join('');
}

/** The tag of a route: its first path segment under /api (`/healthz` and `/metrics`: `health`). */
export function tagOf(url: string): string {
  const [first, second] = url.split('/').filter(Boolean);
  if (first !== 'api' || !second) return 'health';
  return second === 'library' ? 'libraries' : second.replace(/\.json$/, '');
}

/** Tag descriptions (a tag without one is described by its name). */
export const TAGS: Record<string, string> = {
  health: 'Liveness and Prometheus metrics, also on the plaintext listener.',
  auth: 'Log in and out: a session token for Authorization: Bearer.',
  users: 'Users and their roles.',
  apikeys: 'API keys for scripts and integrations.',
  system: 'The appliance: version, restart, updates, reboot, support bundle.',
  pools: 'Storage pools: where cartridge images live.',
  storage: 'Pool figures and block devices.',
  libraries: 'Tape libraries: declare, apply, load and unload drives.',
  cartridges: 'Cartridges: mint, delete, export, evict, import.',
  jobs: 'Export, evict and import jobs.',
  remotes: 'S3 remotes for offsite copies.',
  catalog: 'What the remotes hold.',
  events: 'The event journal and its live stream.',
  targets: 'iSCSI and Fibre Channel targets and their initiators.',
  gitops: 'Declared objects: plan, apply, Git sources.',
  settings: 'Appliance settings.',
  status: 'The status view of every library.',
  audit: 'Who did what.',
  openapi: 'This document.',
};

/** Example bodies of the main requests, by `<METHOD> <route>`. */
export const EXAMPLES: Record<string, unknown> = {
  'POST /api/auth/login': { username: 'admin', password: 'correct horse battery staple' },
  'POST /api/pools': { name: 'fast', path: '/srv/vtl/fast' },
  'POST /api/libraries': {
    name: 'backup',
    product: '3573-TL',
    drive_product: 'ULT3580-TD8',
    num_drives: 2,
    num_slots: 40,
    num_map: 4,
    label_prefix: 'BKP',
    pool_id: 1,
  },
  'POST /api/cartridges': { library: 1, count: 10 },
};

/**
 * Component names where the export's name says how the API builds the record rather than what it
 * is: a list row of a library is a Library to an SDK user. Others keep their export names.
 */
export const COMPONENT_NAMES: Record<string, string> = {
  LibraryRow: 'Library',
  PoolRow: 'Pool',
  UserRow: 'User',
  ApiKeyRow: 'ApiKey',
  InitiatorView: 'Initiator',
};
