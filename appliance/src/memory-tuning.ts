/**
 * How the launcher starts its Node children so that an idle appliance stays small (issue 13:
 * idle RSS). Measured with one full 400-slot library, each process idle after a mint:
 *
 * - V8's young generation grows to 3 × 16 MB semi-spaces under a burst (a mint, a loaded view)
 *   and stays committed afterwards. The control plane allocates little per request (views are
 *   served as stored bytes), so a 1 MB semi-space costs it some more, cheap, scavenges and
 *   saves 20-30 MB per process.
 * - glibc's malloc raises its mmap threshold after the first large free, so a big buffer freed
 *   in a worker thread (scrypt's 16 MB at a login) then stays in that thread's arena for good.
 *   A fixed threshold hands such buffers back to the kernel; two arenas bound the per-thread
 *   ones. Not for the emulator: its data path allocates 1 MiB buffers per command, which would
 *   then be mapped and zeroed by the kernel each time (it is started by the nodeagent with its
 *   own flags, and the nodeagent's own environment is left alone for that reason).
 */
export interface ChildTuning {
  /** Node/V8 flags before the entry script. */
  execArgv: string[];
  /** Environment added to the child's. */
  env: Record<string, string>;
}

const SMALL_YOUNG_GENERATION = ['--max-semi-space-size=1'];

const MALLOC_RETURNS_MEMORY = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

export function childTuning(name: 'apiserver' | 'controller' | 'nodeagent'): ChildTuning {
  return {
    execArgv: SMALL_YOUNG_GENERATION,
    env: name === 'nodeagent' ? {} : MALLOC_RETURNS_MEMORY,
  };
}
