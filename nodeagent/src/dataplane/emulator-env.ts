/**
 * The environment the nodeagent starts its emulator with: its own, less the fixed malloc
 * thresholds the launcher gives the nodeagent (appliance/src/memory-tuning.ts). With them the
 * emulator's 1 MiB buffer per command would be mapped and zeroed by the kernel each time;
 * without, glibc raises its mmap threshold after the first such free and reuses the memory.
 * MALLOC_ARENA_MAX stays: two arenas bound the per-thread ones, which do not serve the data path.
 */
const DATA_PATH_MALLOC = ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'];

export function emulatorEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of DATA_PATH_MALLOC) delete out[name];
  return out;
}
