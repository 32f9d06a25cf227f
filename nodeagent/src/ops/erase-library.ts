import fs from 'node:fs/promises';
import path from 'node:path';
import { EraseLibraryParams, VtlError } from '@vtl/api';
import type { OpHandler } from '@vtl/reconcile';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';

/**
 * A library delete's node-local part (the controller runs the delete and owns the records):
 * unload and remove the library's cartridges from the emulator, then remove its media
 * directory. Idempotent, so a retried delete runs it again harmlessly. Answers the labels the
 * emulator could not remove (their files go with the directory).
 */
export function eraseLibraryOp(deps: {
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
}): OpHandler {
  const { supervisor, publisher } = deps;
  return async (op, ctx) => {
    const parsed = EraseLibraryParams.safeParse(op.params);
    if (!parsed.success)
      throw new VtlError('internal', `erase_library op ${op.id} has bad params; this is a bug.`);
    const { library: id, labels, media_dir: mediaDir, pool_path: poolPath } = parsed.data;
    const emulator = supervisor.emulator;
    const served = publisher.libraries.find((l) => l.id === id);
    const skipped: string[] = [];
    for (const label of labels) {
      try {
        const loaded = served?.drives.find((d) => d.loaded === label);
        if (emulator && loaded) await emulator.unload({ library: id, drive: loaded.index, force: true });
        if (emulator && served?.cartridges.some((c) => c.label === label))
          await emulator.remove({ library: id, label });
      } catch (err) {
        ctx.log.warn(
          { err, label },
          'cartridge not removed from the emulator; its files go with the library',
        );
        skipped.push(label);
      }
    }
    // Only ever remove a directory that is inside the library's pool.
    if (path.resolve(mediaDir).startsWith(path.resolve(poolPath) + path.sep))
      await fs.rm(mediaDir, { recursive: true, force: true });
    await ctx.step(`Erased library ${id}'s ${labels.length} cartridges and its media directory on this node`);
    await publisher.publish();
    return { skipped };
  };
}
