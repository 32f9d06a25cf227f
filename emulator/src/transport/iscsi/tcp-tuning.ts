import type { Server } from 'node:net';
import { constants } from 'node:os';
import koffi from 'koffi';

/**
 * The TCP congestion control of the target's connections. Node has no setsockopt, so libc's
 * is called through koffi on the listening socket; accepted connections inherit the choice.
 *
 * Why the target picks one: BBR, which many distributions and cloud images make the system
 * default, paces every segment with timers when no fq qdisc does it for the socket. On a
 * storage network (and on loopback, where the benchmark runs) that pacing cost the event loop
 * about a third of its time while streaming reads, for no gain: there is no bottleneck link
 * to probe. CUBIC sends as the window allows.
 */
export const DEFAULT_TCP_CONGESTION = 'cubic';

/** TCP_CA_NAME_MAX is 16 bytes with the terminating NUL. */
const NAME = /^[a-z0-9_-]{1,15}$/;
const IPPROTO_TCP = 6;
const TCP_CONGESTION = 13;

type SetSockOpt = (fd: number, level: number, name: number, value: Buffer, length: number) => number;
let setsockopt: SetSockOpt | undefined;

function libcSetsockopt(): SetSockOpt {
  setsockopt ??= koffi
    .load('libc.so.6')
    .func('int setsockopt(int fd, int level, int name, const void *value, uint32_t length)') as SetSockOpt;
  return setsockopt;
}

/** Whether a name can be a kernel congestion control algorithm's. */
export function isCongestionControlName(name: string): boolean {
  return NAME.test(name);
}

/**
 * Sets the congestion control algorithm of a listening server's socket. Returns undefined
 * when set, else why not (the kernel lacks it, the platform has no such option); the system's
 * default then stays.
 */
export function setCongestionControl(server: Server, algorithm: string): string | undefined {
  if (!isCongestionControlName(algorithm)) return `"${algorithm}" is not an algorithm name`;
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (process.platform !== 'linux' || typeof fd !== 'number' || fd < 0) {
    return 'only Linux sockets can choose their congestion control';
  }
  const name = Buffer.from(algorithm);
  try {
    if (libcSetsockopt()(fd, IPPROTO_TCP, TCP_CONGESTION, name, name.length) === 0) return undefined;
    return refusal(koffi.errno() as number);
  } catch (err) {
    return `libc could not be called: ${(err as Error).message}`;
  }
}

function refusal(errno: number): string {
  const code = Object.entries(constants.errno).find(([, n]) => n === errno)?.[0];
  if (code === 'ENOENT') {
    return 'the kernel does not offer it (sysctl net.ipv4.tcp_available_congestion_control lists those it does)';
  }
  if (code === 'EPERM') return 'this user may not choose it (sysctl net.ipv4.tcp_allowed_congestion_control)';
  return `the kernel refused it (${code ?? `errno ${errno}`})`;
}
