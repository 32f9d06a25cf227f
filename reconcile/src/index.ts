export {
  Requeue,
  startController,
  TerminalError,
  type Controller,
  type ControllerOptions,
  type ReconcileResult,
} from './controller.js';
export { runWhileLeader, type LeaderOptions } from './leader.js';
export { waitFor, type WaitOptions } from './wait.js';
export { watchEach, watchInto } from './informer.js';
export { WorkQueue, type WorkQueueOptions } from './work-queue.js';
export { startOpRunner, type OpContext, type OpHandler } from './op-runner.js';
export {
  awaitOp,
  awaitOpResult,
  watchOpUntilFinished,
  type AwaitOpOptions,
  type OpTimeoutMessage,
} from './op-wait.js';
export {
  runProcess,
  runStoreProcess,
  type StoreProcess,
  type StoreProcessConfig,
  type StoreProcessSpec,
} from './process.js';
export { exitOnRestartRequest } from './restart-request.js';
export { boundedStep, HARD_EXIT_MS, onShutdown, watchSupervisor, type StopReason } from './shutdown.js';
export { commandLine, identify, stillRuns, type ProcessIdentity } from './process-identity.js';
export { reconcileRegistry, serveMetrics, type ReconcileOutcome } from './metrics.js';
export { healthSettingsFromEnv, serveHealth, type HealthSettings, type Pingable } from './health-server.js';
