export { loadConfig, type ApplianceConfig } from './config.js';
export { SupervisedProcess } from './supervised-process.js';
