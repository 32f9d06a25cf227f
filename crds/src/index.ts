export * from './json-schema.js';
export * from './structural.js';
export * from './structural-problems.js';
export * from './resources.js';
export * from './crd.js';
export * from './crd-files.js';
export * from './validations.js';
