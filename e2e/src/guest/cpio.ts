/** One file of a cpio archive: a path relative to the guest's root, its bytes and mode bits. */
export interface CpioFile {
  name: string;
  data: Buffer | string;
  mode?: number;
  /** A directory (its data is ignored); the kernel creates no parents for the files it unpacks. */
  dir?: boolean;
  /** A symbolic link to this target (its data is ignored). */
  symlink?: string;
}

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

const pad4 = (n: number) => (4 - (n % 4)) % 4;

function entry(name: string, data: Buffer, mode: number, ino: number): Buffer {
  const nameBytes = Buffer.from(`${name}\0`);
  const fields = [ino, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0];
  const header = Buffer.from('070701' + fields.map((f) => f.toString(16).padStart(8, '0')).join(''));
  return Buffer.concat([
    header,
    nameBytes,
    Buffer.alloc(pad4(header.length + nameBytes.length)),
    data,
    Buffer.alloc(pad4(data.length)),
  ]);
}

/**
 * A "newc" cpio archive of regular files, as the kernel unpacks into its initramfs. Appended
 * to a compressed initramfs it adds (or replaces) files: the kernel reads archives one after
 * another, so the test's script travels beside the cached image without rebuilding it.
 */
export function cpioArchive(files: CpioFile[]): Buffer {
  const parts = files.map((f, i) =>
    f.symlink !== undefined
      ? entry(f.name.replace(/^\/+/, ''), Buffer.from(f.symlink), S_IFLNK | 0o777, i + 1)
      : f.dir
        ? entry(f.name.replace(/^\/+/, ''), Buffer.alloc(0), S_IFDIR | (f.mode ?? 0o755), i + 1)
        : entry(f.name.replace(/^\/+/, ''), Buffer.from(f.data), S_IFREG | (f.mode ?? 0o644), i + 1),
  );
  parts.push(entry('TRAILER!!!', Buffer.alloc(0), 0, 0));
  const archive = Buffer.concat(parts);
  // The kernel wants each archive of a concatenation to start 4-byte aligned; pad to 512.
  return Buffer.concat([archive, Buffer.alloc((512 - (archive.length % 512)) % 512)]);
}
