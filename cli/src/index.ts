export * from './config.js';
export * from './errors.js';
export * from './plan-format.js';
export * from './table.js';
