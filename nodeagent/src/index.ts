export { loadConfig, type NodeagentConfig } from './config.js';
export { hostPowerFrom, OsHostPower, RecordingHostPower, type HostPower } from './host-power.js';
export { directoryPoolFigures } from './pool/pool-figures.js';
export { emulatorConfig } from './dataplane/emulator-config.js';
export { EmulatorSupervisor } from './dataplane/emulator-supervisor.js';
export { NodeStatusPublisher } from './dataplane/node-status.js';
export { eraseLibraryOp } from './ops/erase-library.js';
