import { LOG_BINARY_LIST, logPage, logParameter } from '../scsi/log-parameters.js';

/** TapeAlert flags (SSC-4 Annex A) this drive raises; the parameter code is the flag number. */
export const TapeAlertFlag = {
  MEDIA: 0x04,
  READ_FAILURE: 0x05,
  WRITE_FAILURE: 0x06,
  WRITE_PROTECT: 0x09,
  NO_REMOVAL: 0x0a,
  UNSUPPORTED_FORMAT: 0x0c,
  READ_ONLY_FORMAT: 0x11,
} as const;

const FLAG_COUNT = 0x40;

/**
 * The drive's TapeAlert state. Flags are set when the condition happens and cleared when the
 * host reads log page 2Eh, or when the cartridge they concern leaves the drive, as SSC
 * describes for the "read the log page, act, forget" polling backup software does.
 */
export class TapeAlerts {
  private readonly set = new Set<number>();

  raise(flag: number): void {
    this.set.add(flag);
  }

  active(): number[] {
    return [...this.set].sort((a, b) => a - b);
  }

  clear(): void {
    this.set.clear();
  }

  /** The 64 flags as the 8-byte TAPEALERT FLAGS MAM attribute (flag 1 = most significant bit). */
  asBitmap(): Buffer {
    const out = Buffer.alloc(8);
    for (const flag of this.set) out[(flag - 1) >> 3]! |= 0x80 >> ((flag - 1) & 7);
    return out;
  }

  /** Log page 2Eh with all 64 parameters; reading it clears the flags. */
  takeLogPage(): Buffer {
    const params: Buffer[] = [];
    for (let flag = 1; flag <= FLAG_COUNT; flag++) {
      params.push(logParameter(flag, Buffer.from([this.set.has(flag) ? 1 : 0]), LOG_BINARY_LIST));
    }
    this.set.clear();
    return logPage(0x2e, params);
  }
}
