import path from 'node:path';

/** Settings of `vtl emulator` (emulator-runner.ts), a process of its own beside the nodeagent. */
export interface EmulatorRunnerConfig {
  /** VTL_STATE_DIR: where the nodeagent writes the emulator's configuration and socket. */
  stateDir: string;
  /** VTL_EMULATOR_RETRY_MS: how long after a crash the emulator is started again (default 2 s). */
  retryMs: number;
  /**
   * The TCMU handler this container supervises beside the emulator (docs/fc.md), when both
   * VTL_TCMU_HANDLER (its binary) and VTL_TCMU_LISTEN (where it connects) are set.
   */
  tcmu?: { handler: string; listen: string; sysfsRoot: string; configfsRoot: string };
}

export function loadEmulatorRunnerConfig(env: NodeJS.ProcessEnv = process.env): EmulatorRunnerConfig {
  const retryMs = Number(env.VTL_EMULATOR_RETRY_MS ?? 2_000);
  if (!Number.isFinite(retryMs) || retryMs < 0)
    throw new Error(
      `VTL_EMULATOR_RETRY_MS must be a number of milliseconds, got "${env.VTL_EMULATOR_RETRY_MS}"`,
    );
  const tcmu =
    env.VTL_TCMU_HANDLER && env.VTL_TCMU_LISTEN
      ? {
          handler: path.resolve(env.VTL_TCMU_HANDLER),
          listen: env.VTL_TCMU_LISTEN,
          sysfsRoot: env.VTL_SYSFS_ROOT ?? '/sys',
          configfsRoot: env.VTL_CONFIGFS_ROOT ?? '/sys/kernel/config',
        }
      : undefined;
  return { stateDir: path.resolve(env.VTL_STATE_DIR ?? 'var'), retryMs, ...(tcmu ? { tcmu } : {}) };
}
