/**
 * The offsite engine, loaded by the first remote op (test, listing, catalog rebuild, recover):
 * its package index brings the S3 client (some 20 MB of a process's private memory) that a
 * controller of an appliance without remotes never needs. Cached by the module system.
 */
export const loadOffsite = () => import('@vtl/offsite');
