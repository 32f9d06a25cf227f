import koffi from 'koffi';

/**
 * Asks the kernel to back a memory with transparent huge pages (madvise MADV_HUGEPAGE).
 *
 * Why the aligned pool wants them: a direct read or write hands the disk the buffer's pages
 * as they lie in physical memory, and a virtio disk takes at most `max_segments` of them
 * (254 here) per request. Ordinary 4 KiB pages faulted in after the page cache has been
 * churned lie scattered, so a 3 MiB read-ahead reaches the disk as four or five requests of
 * 650–880 KiB, each costing the hypervisor; in 2 MiB pages it is one 3 MiB request. Measured on
 * the CI's kind of VM right after a CI run (O_DIRECT, 3 MiB reads, four in flight): 1,170–1,310
 * MiB/s in 4 KiB pages, 3,570–3,590 MiB/s in huge pages (docs/performance.md).
 *
 * Systems whose `transparent_hugepage/enabled` is `madvise` (Debian's default) give huge pages
 * only to memory advised so; `always` gives them anyway and `never` ignores the advice. Node
 * has no madvise, so libc's is called through koffi, before the memory's pages are first
 * touched (the kernel then faults each 2 MiB in at once).
 */

const MADV_HUGEPAGE = 14;

type Madvise = (addr: Uint8Array, length: number, advice: number) => number;
let madvise: Madvise | undefined;

/** Whether the advice was taken; false (the memory stays in 4 KiB pages) off Linux or on refusal. */
export function adviseHugePages(memory: Uint8Array): boolean {
  if (process.platform !== 'linux') return false;
  try {
    madvise ??= koffi.load('libc.so.6').func('int madvise(void *addr, size_t length, int advice)') as Madvise;
    // koffi passes a typed array as a pointer to its first byte, which is page-aligned for a
    // WebAssembly memory, as madvise requires.
    return madvise(memory, memory.byteLength, MADV_HUGEPAGE) === 0;
  } catch {
    return false; // no glibc, or koffi cannot load here
  }
}
