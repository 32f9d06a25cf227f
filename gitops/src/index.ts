export * from './model/index.js';
export * from './contract.js';
