import type { EmuLibrary, EmulatorClient, StatusResult } from '@vtl/emulator';

/**
 * Reads the emulator's status again and again without receiving what it already has: each call
 * passes the tag of the last answer (`since`), and an `unchanged` answer stands for the
 * libraries kept from before. The nodeagent's node status (every second) and its fabric pass
 * (every second) each follow the emulator this way: with 16 full libraries a full status is
 * some 1 MB of JSON that was read, parsed and thrown away twice a second while nothing changed.
 */
export class EmulatorStatusFollower {
  private from: EmulatorClient | undefined;
  private tag: string | undefined;
  private libraries: EmuLibrary[] = [];

  /**
   * The status, its libraries always filled in; `fresh` is false when they are the same array
   * (and objects) as the previous call's, so a caller may keep what it derived from them.
   */
  async read(emulator: EmulatorClient): Promise<StatusResult & { fresh: boolean }> {
    // A tag belongs to one connection's emulator; another client starts afresh.
    const since = emulator === this.from ? this.tag : undefined;
    const seen = await emulator.status(since === undefined ? undefined : { since });
    const fresh = since === undefined || !seen.unchanged;
    if (fresh) this.libraries = seen.libraries;
    this.from = emulator;
    this.tag = seen.tag;
    return { ...seen, libraries: this.libraries, fresh };
  }
}
