/**
 * glibc's malloc_trim(0), for the idle collection (idle-gc.ts; issue 13: idle RSS). free()
 * hands memory back to the kernel only from the top of an arena, so a burst of native
 * allocations (TLS and HTTP/2 buffers of the etcd client, file system requests, the emulator's
 * control lines) leaves the freed pages of a fragmented arena resident for good. malloc_trim
 * also releases the free pages inside every arena. Measured on an appliance idle with 16 full
 * libraries: nodeagent 96 → 58 MB private, emulator 55 → 34, apiserver 67 → 59, controller and
 * launcher a few MB each. Node has no binding for it, so libc's is called through koffi (as the
 * emulator's TCP tuning calls setsockopt), loaded on first use: a process that never goes idle
 * after a burst does not load it.
 */
import { createRequire } from 'node:module';

type Trim = (pad: number) => number;

let trim: Trim | null | undefined;

/** libc's malloc_trim, or null where there is none (not Linux, not glibc: musl has no such call). */
function libcTrim(): Trim | null {
  if (trim !== undefined) return trim;
  trim = null;
  if (process.platform !== 'linux') return trim;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as Trim;
  } catch {
    // No glibc, or koffi cannot load here: the idle collection does without.
  }
  return trim;
}

/** Releases the free memory of every malloc arena; false where that cannot be done. */
export function trimMalloc(): boolean {
  const fn = libcTrim();
  if (!fn) return false;
  fn(0);
  return true;
}
