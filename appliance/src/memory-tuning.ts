/**
 * How the launcher starts its Node children so that an idle appliance stays small (issue 13:
 * idle RSS). Measured with one full 400-slot library, each process idle after a mint:
 *
 * - V8's young generation grows to 3 × 16 MB semi-spaces under a burst (a mint, a loaded view)
 *   and stays committed afterwards. 4 MB semi-spaces keep it at a quarter of that. Not 1 MB
 *   (tried): objects that live for one request then survive two scavenges and are promoted,
 *   which made an allocation-heavy loop 6-9 × slower than with 4 MB and left a bigger old
 *   generation behind (more RSS, not less).
 * - glibc's malloc raises its mmap threshold after the first large free, so a big buffer freed
 *   in a worker thread (scrypt's 16 MB at a login) then stays in that thread's arena for good.
 *   A fixed threshold hands such buffers back to the kernel; two arenas bound the per-thread
 *   ones (the nodeagent, which had none, kept 6 MB in thread arenas idle with 16 libraries; 2
 *   MB with them). The thresholds are not for the emulator: its data path allocates 1 MiB
 *   buffers per command, which would then be mapped and zeroed by the kernel each time; the
 *   nodeagent starts it without them (nodeagent/src/dataplane/emulator-env.ts), two arenas kept.
 * - V8 keeps the heap a burst grew to; idle-gc.ts, loaded before the entry script, collects
 *   once after a busy spell goes quiet (the launcher imports it itself).
 */
export interface ChildTuning {
  /** Node/V8 flags before the entry script. */
  execArgv: string[];
  /** Environment added to the child's. */
  env: Record<string, string>;
}

const SMALL_YOUNG_GENERATION = ['--max-semi-space-size=4'];
/** The idle collection, from this same tree (the entries the launcher starts are beside it). */
const IDLE_GC = `--import=${new URL('./idle-gc.js', import.meta.url).href}`;

const MALLOC_RETURNS_MEMORY = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/**
 * The nodeagent gets the idle collection through NODE_OPTIONS rather than a flag, so that the
 * emulator it starts (with flags of its own, inheriting its environment) has it too: the
 * emulator's `--initial-heap-size=64` lets 64 MB of garbage pile up before its first full
 * collection, which an idle emulator otherwise kept. `inherited` is the launcher's own NODE_OPTIONS.
 */
export function childTuning(
  name: 'apiserver' | 'controller' | 'nodeagent',
  inherited: string | undefined,
): ChildTuning {
  if (name === 'nodeagent')
    return {
      execArgv: SMALL_YOUNG_GENERATION,
      env: { ...MALLOC_RETURNS_MEMORY, NODE_OPTIONS: [inherited, IDLE_GC].filter(Boolean).join(' ') },
    };
  return { execArgv: [...SMALL_YOUNG_GENERATION, IDLE_GC], env: MALLOC_RETURNS_MEMORY };
}
