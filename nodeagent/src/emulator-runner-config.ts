import path from 'node:path';

/** Settings of `vtl emulator` (emulator-runner.ts), a process of its own beside the nodeagent. */
export interface EmulatorRunnerConfig {
  /** VTL_STATE_DIR: where the nodeagent writes the emulator's configuration and socket. */
  stateDir: string;
  /** VTL_EMULATOR_RETRY_MS: how long after a crash the emulator is started again (default 2 s). */
  retryMs: number;
}

export function loadEmulatorRunnerConfig(env: NodeJS.ProcessEnv = process.env): EmulatorRunnerConfig {
  const retryMs = Number(env.VTL_EMULATOR_RETRY_MS ?? 2_000);
  if (!Number.isFinite(retryMs) || retryMs < 0)
    throw new Error(
      `VTL_EMULATOR_RETRY_MS must be a number of milliseconds, got "${env.VTL_EMULATOR_RETRY_MS}"`,
    );
  return { stateDir: path.resolve(env.VTL_STATE_DIR ?? 'var'), retryMs };
}
