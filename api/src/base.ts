/**
 * `@vtl/api/base`: the part of this package that loads no schema library: the error type and
 * codes, identifiers and their formats, the etcd key space, the LTO generations, the cartridge
 * image's files, the LUN layout and the wrong-guess throttle (logins and CHAP). For the processes that validate nothing with zod, the
 * launcher and the emulator: loading zod and the resource schemas costs a Node process some
 * 17 MB of memory for good (issue 13's idle memory). appliance/src/launcher-modules.test.ts
 * checks that neither loads zod.
 */
export * from './errors.js';
export * from './identifiers.js';
export * from './keys.js';
export * from './lto.js';
export * from './cartridge-image.js';
export * from './lun-layout.js';
export * from './guess-throttle.js';
