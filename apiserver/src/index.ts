export { buildApp, buildPlainApp } from './app.js';
export { loadConfig, type ApiserverConfig } from './config.js';
export type { AppContext } from './context.js';
export { VERSION } from './version.js';
