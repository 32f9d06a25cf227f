/**
 * Runs async tasks one after another. A cartridge image or a library inventory is touched by
 * the control socket and by SCSI commands at once; interleaving their awaits would tear state.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task);
    // A failed task must not poison the ones queued after it.
    this.tail = next.catch(() => undefined);
    return next;
  }
}
