import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

/**
 * The launcher starts etcd and the other processes and never talks to etcd itself: it takes the
 * store package's launcher entry, not the etcd client (etcd3, gRPC, protobufjs: some 20 MB of a
 * process's memory, kept for good; issue 13's idle memory). seal-rotate.js is the separate
 * command that does talk to etcd; main.js starts the launcher when imported.
 */
describe('the launcher loads no etcd client', () => {
  it('loading the modules main.js is made of loads neither etcd3 nor gRPC', async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), [
      'main.js',
      'seal-rotate.js',
    ]);
    expect(loaded.some((u) => u.includes('/appliance/dist/config.js'))).toBe(true);
    expect(loaded.filter((u) => /\/node_modules\/(etcd3|@grpc|protobufjs)\//.test(u))).toEqual([]);
  }, 90_000);
});
