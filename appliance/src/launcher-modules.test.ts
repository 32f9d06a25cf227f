import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

const ETCD_CLIENT = /\/node_modules\/(etcd3|@grpc|protobufjs)\//;
/** zod and the API's resource schemas: some 17 MB of a process's memory, kept for good. */
const SCHEMAS = /\/node_modules\/zod\/|\/api\/dist\/(index|models|resources\/)/;

/**
 * Issue 13's idle memory: what a module graph loads stays in the process for good. The launcher
 * starts etcd and the other processes and never talks to etcd itself: it takes no more of the
 * store package than a type, not the etcd client (etcd3, gRPC, protobufjs: some 20 MB).
 * seal-rotate.js (with its seal-rotation.js) is the separate command that does talk to etcd;
 * main.js starts the launcher
 * when imported. Neither the launcher nor the emulator validates anything with zod: they take
 * `@vtl/api/base`, the API package without its schemas.
 */
describe('the launcher and the emulator load only what they use', () => {
  it('loading the modules main.js is made of loads neither an etcd client nor zod', async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), [
      'main.js',
      'seal-rotate.js',
      'seal-rotation.js',
    ]);
    expect(loaded.some((u) => u.includes('/appliance/dist/config.js'))).toBe(true);
    expect(loaded.some((u) => u.includes('/api/dist/base.js'))).toBe(true);
    expect(loaded.filter((u) => ETCD_CLIENT.test(u) || SCHEMAS.test(u))).toEqual([]);
  }, 90_000);

  it("loading the emulator's modules loads no zod", async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '../../emulator'), ['main.js']);
    expect(loaded.some((u) => u.includes('/emulator/dist/dataplane.js'))).toBe(true);
    expect(loaded.filter((u) => SCHEMAS.test(u))).toEqual([]);
  }, 90_000);
});
