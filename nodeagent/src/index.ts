export { loadConfig, type NodeagentConfig } from './config.js';
export { hostPowerFrom, OsHostPower, RecordingHostPower, type HostPower } from './host-power.js';
export { directoryPoolFigures } from './pool/pool-figures.js';
export { emulatorConfig } from './dataplane/emulator-config.js';
