import { closeSync, fsyncSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * The raw-file baseline, in its own process: sequential writes of `--block` bytes to a new
 * plain file, fsynced at the end (the same durability point as WRITE FILEMARKS on the emulator),
 * or sequential reads of it. The previous file is deleted before the clock starts, so the
 * baseline never pays for freeing it (the emulator frees its old data file while it runs). Blocks carry their sequence number like the initiator's, and reads
 * check it. Prints one JSON line with the timing.
 *
 *   node raw-file.js --file PATH --mode write|read --block 262144 --bytes 2147483648
 */
function main(): void {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      mode: { type: 'string' },
      block: { type: 'string' },
      bytes: { type: 'string' },
    },
  });
  const block = Number(values.block);
  const blocks = Math.floor(Number(values.bytes) / block);
  if (!values.file || !(block > 0) || !(blocks > 0) || (values.mode !== 'write' && values.mode !== 'read')) {
    throw new Error('usage: raw-file.js --file PATH --mode write|read --block B --bytes N');
  }
  const writing = values.mode === 'write';
  const buffer = Buffer.alloc(block, 0x5a);
  if (writing) {
    rmSync(values.file, { force: true });
    // Commits the freeing (and the discards the mount may issue) before the clock starts.
    const dir = openSync(dirname(values.file), 'r');
    fsyncSync(dir);
    closeSync(dir);
  }
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  const fd = openSync(values.file, writing ? 'w' : 'r');
  for (let seq = 0; seq < blocks; seq++) {
    if (writing) {
      buffer.writeBigUInt64LE(BigInt(seq), 0);
      for (let done = 0; done < block;) done += writeSync(fd, buffer, done, block - done);
    } else {
      let got = 0;
      for (let n = -1; got < block && n !== 0; got += n) n = readSync(fd, buffer, got, block - got, null);
      if (got !== block || buffer.readBigUInt64LE(0) !== BigInt(seq)) {
        throw new Error(`block ${seq} of ${values.file} is short or out of place`);
      }
    }
  }
  if (writing) fsyncSync(fd);
  closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const result = { bytes: blocks * block, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
