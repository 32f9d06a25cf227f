import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpioArchive } from './cpio.js';
import type { GuestImage } from './guest-image.js';

/** The portal address the guest logs in to; QEMU forwards it to the target on the host. */
export const GUEST_PORTAL = '10.0.2.100:3260';

const e2eRoot = path.resolve(import.meta.dirname, '../..');
const forwarder = path.join(e2eRoot, 'dist/guest/tcp-forward.js');

/** One `RESULT <step> ok|fail <detail>` line the guest printed on its console. */
export interface GuestResult {
  step: string;
  ok: boolean;
  detail: string;
}

export interface GuestRun {
  /** Everything the guest's serial console printed (kernel messages included). */
  console: string;
  results: GuestResult[];
  /** The guest reached the end of its script and powered off. */
  finished: boolean;
}

export interface GuestRunOptions {
  qemu: string;
  image: GuestImage;
  /** The shell script the guest's /init runs as /test.sh. */
  script: string;
  /** The host's 127.0.0.1 port the guest's portal is forwarded to. */
  targetPort: number;
  timeoutMs: number;
  /** More cpio archives appended to the initramfs (the LTFS overlay). */
  extraArchives?: Buffer[];
  /** Guest memory (default 768 MiB); the initramfs and what the steps write live in it. */
  memoryMb?: number;
  /** More guest address:port -> host 127.0.0.1 port forwards (e.g. the TCMU bridge). */
  forwards?: { guest: string; hostPort: number }[];
  /** Each console line as it arrives (progress logging). */
  onLine?: (line: string) => void;
}

/** Parses the guest's result lines out of its console output. */
export function parseResults(console: string): GuestResult[] {
  const results: GuestResult[] = [];
  for (const line of console.split(/\r?\n/)) {
    const m = /^RESULT (\S+) (ok|fail)(?: (.*))?$/.exec(line.trim());
    if (m) results.push({ step: m[1]!, ok: m[2] === 'ok', detail: m[3] ?? '' });
  }
  return results;
}

/** QEMU's -netdev option value; a comma inside an option value is written twice. */
function netdev(targetPort: number, forwards: { guest: string; hostPort: number }[] = []): string {
  const fwd = (guest: string, hostPort: number) => {
    const [ip, port] = guest.split(':');
    const cmd = [process.execPath, forwarder, '127.0.0.1', String(hostPort)].join(' ').replaceAll(',', ',,');
    return `guestfwd=tcp:${ip}:${port}-cmd:${cmd}`;
  };
  const all = [fwd(GUEST_PORTAL, targetPort), ...forwards.map((f) => fwd(f.guest, f.hostPort))];
  // restrict=on: the guest reaches nothing but the forwarded addresses.
  return `user,id=net0,restrict=on,${all.join(',')}`;
}

/**
 * Boots the guest under QEMU (software emulation) with the script appended to its initramfs,
 * and resolves with its console output once it powers off. Rejects on timeout, with the output.
 */
export async function runGuest(opts: GuestRunOptions): Promise<GuestRun> {
  await fs.access(forwarder).catch(() => {
    throw new Error(`${forwarder} is missing: build first (npx tsc -b)`);
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-guest-'));
  try {
    const base = await fs.readFile(opts.image.initrd);
    const extra = cpioArchive([{ name: 'test.sh', data: opts.script, mode: 0o755 }]);
    // The appended archives must start 4-byte aligned; the kernel skips the zero padding
    // (cpioArchive pads each of its own to 512 bytes).
    const initrd = path.join(dir, 'initrd.img');
    const align = Buffer.alloc((4 - (base.length % 4)) % 4);
    await fs.writeFile(initrd, Buffer.concat([base, align, ...(opts.extraArchives ?? []), extra]));
    const args = [
      ...['-machine', 'pc', '-accel', 'tcg', '-m', String(opts.memoryMb ?? 768), '-smp', '1'],
      ...['-nodefaults', '-display', 'none', '-serial', 'stdio', '-no-reboot'],
      ...['-kernel', opts.image.kernel, '-initrd', initrd],
      // no_timer_check: on a loaded host the emulated timer misses the kernel's IO-APIC check,
      // which then panics at boot ("IO-APIC + timer doesn't work").
      ...['-append', 'console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check'],
      ...['-netdev', netdev(opts.targetPort, opts.forwards), '-device', 'virtio-net-pci,netdev=net0'],
    ];
    return await new Promise<GuestRun>((resolve, reject) => {
      const child = spawn(opts.qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      let partial = '';
      const onData = (d: Buffer) => {
        output += d.toString();
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) opts.onLine?.(line.replace(/\r$/, ''));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(`the guest did not finish within ${opts.timeoutMs} ms; console:\n${output.slice(-6000)}`),
        );
      }, opts.timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', () => {
        clearTimeout(timer);
        resolve({
          console: output,
          results: parseResults(output),
          finished: /^GUEST-DONE\r?$/m.test(output),
        });
      });
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
