import { CARTRIDGE_META_FILE, cartridgeFilesOfMeta } from '@vtl/api';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { OffsiteError } from '../errors.js';
import { END_OF_ARCHIVE, fileHeader, padding } from './tar-header.js';

/** One stretch of the tar stream: literal bytes (headers, padding) or a range of a file. */
interface Segment {
  start: number;
  length: number;
  bytes?: Buffer;
  file?: { handle: FileHandle; name: string };
}

/**
 * The deterministic tar of a cartridge directory, readable at any offset: resuming an export
 * starts at a chunk's raw_offset without reading what came before. Files are opened once and
 * their sizes fixed at open; the caller keeps the cartridge quiet until close().
 */
export class TarSource {
  private constructor(
    private readonly segments: Segment[],
    private readonly handles: FileHandle[],
    /** Length of the whole tar stream. */
    readonly size: number,
    /** Size of each file, by name. */
    readonly fileSizes: Record<string, number>,
  ) {}

  /** Opens the files of a cartridge image (every partition's); 'invalid' names a missing one. */
  static async open(dir: string): Promise<TarSource> {
    let names: string[];
    try {
      names = cartridgeFilesOfMeta(await readFile(join(dir, CARTRIDGE_META_FILE), 'utf8'));
    } catch (err) {
      throw new OffsiteError(
        'invalid',
        `the cartridge image at ${dir} has no readable meta.json (${(err as Error).message})`,
      );
    }
    const segments: Segment[] = [];
    const handles: FileHandle[] = [];
    const fileSizes: Record<string, number> = {};
    let pos = 0;
    const literal = (bytes: Buffer) => {
      if (bytes.length === 0) return;
      segments.push({ start: pos, length: bytes.length, bytes });
      pos += bytes.length;
    };
    try {
      for (const name of names) {
        let handle: FileHandle;
        try {
          handle = await open(join(dir, name), 'r');
        } catch (err) {
          throw new OffsiteError(
            'invalid',
            `the cartridge image at ${dir} has no readable ${name} (${(err as Error).message})`,
          );
        }
        handles.push(handle);
        const size = (await handle.stat()).size;
        fileSizes[name] = size;
        literal(fileHeader(name, size));
        if (size > 0) segments.push({ start: pos, length: size, file: { handle, name } });
        pos += size;
        literal(Buffer.alloc(padding(size)));
      }
      literal(END_OF_ARCHIVE);
    } catch (err) {
      await Promise.all(handles.map((h) => h.close()));
      throw err;
    }
    return new TarSource(segments, handles, pos, fileSizes);
  }

  /** Fills `into` with the stream from `offset` (fewer bytes only at the end); returns the count. */
  async read(into: Uint8Array, offset: number): Promise<number> {
    const want = Math.min(into.length, this.size - offset);
    let done = 0;
    let i = this.segmentAt(offset);
    while (done < want) {
      const seg = this.segments[i++] as Segment;
      const within = offset + done - seg.start;
      const n = Math.min(seg.length - within, want - done);
      if (seg.bytes) {
        into.set(seg.bytes.subarray(within, within + n), done);
      } else if (seg.file) {
        await readFully(seg.file.handle, into, done, n, within, seg.file.name);
      }
      done += n;
    }
    return done;
  }

  async close(): Promise<void> {
    await Promise.all(this.handles.map((h) => h.close()));
  }

  private segmentAt(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.segments[mid] as Segment).start <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

async function readFully(
  handle: FileHandle,
  into: Uint8Array,
  at: number,
  length: number,
  position: number,
  name: string,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(into, at + done, length - done, position + done);
    if (bytesRead === 0) {
      throw new OffsiteError(
        'invalid',
        `${name} shrank while it was being exported; keep the cartridge out of drives until the export ends, then retry`,
      );
    }
    done += bytesRead;
  }
}
