import { allowsRemoval } from '../scsi/cdb.js';
import type { OpcodeEntry } from '../scsi/dispatch.js';
import { modeSelectDataOutLength } from '../scsi/mode-parameters.js';
import { readBlockLimits, reportDensitySupport } from './density-support.js';
import { loadUnload, preventAllow } from './load-unload.js';
import { readAttribute, writeAttribute, writeAttributeDataOutLength } from './mam-attributes.js';
import { erase, locate, readPosition, rewind, space } from './positioning.js';
import { verify6 } from './verify.js';
import { securityProtocolRows } from './security-protocol.js';
import {
  formatMedium,
  readBuffer,
  sendDiagnostic,
  sendDiagnosticDataOutLength,
  setCapacity,
} from './format-medium.js';
import { read6, write6, write6DataOutLength, writeFilemarks6 } from './read-write.js';
import type { TapeDrive } from './tape-drive.js';
import { tapeLogSelect, tapeLogSense } from './tape-log-pages.js';
import { tapeModeSelect, tapeModeSense } from './tape-mode-pages.js';

/** Sequential-access operation codes (SSC-4 table 3) this drive answers. */
export const SscOpcode = {
  REWIND: 0x01,
  FORMAT_MEDIUM: 0x04,
  READ_BLOCK_LIMITS: 0x05,
  READ_6: 0x08,
  WRITE_6: 0x0a,
  SET_CAPACITY: 0x0b,
  WRITE_FILEMARKS_6: 0x10,
  SPACE_6: 0x11,
  VERIFY_6: 0x13,
  MODE_SELECT_6: 0x15,
  ERASE_6: 0x19,
  MODE_SENSE_6: 0x1a,
  LOAD_UNLOAD: 0x1b,
  PREVENT_ALLOW_MEDIUM_REMOVAL: 0x1e,
  LOCATE_10: 0x2b,
  READ_POSITION: 0x34,
  READ_BUFFER: 0x3c,
  SEND_DIAGNOSTIC: 0x1d,
  REPORT_DENSITY_SUPPORT: 0x44,
  LOG_SELECT: 0x4c,
  LOG_SENSE: 0x4d,
  MODE_SELECT_10: 0x55,
  MODE_SENSE_10: 0x5a,
  READ_ATTRIBUTE: 0x8c,
  WRITE_ATTRIBUTE: 0x8d,
  SPACE_16: 0x91,
  LOCATE_16: 0x92,
} as const;

/** Timeouts IBM publishes for LTO drives, in seconds; backup software sizes its waits by them. */
const MOTION = { nominal: 600, recommended: 2400 };
/** FORMAT MEDIUM and SET CAPACITY: an LTO-9 may calibrate the tape first, which takes long. */
const FORMAT = { nominal: 1800, recommended: 10800 };
const DATA = { nominal: 60, recommended: 1200 };
const QUICK = { nominal: 1, recommended: 60 };

/**
 * The SSC rows of the drive's opcode table (mhvtl's `ssc_ops` template). Everything not listed
 * here or in the SPC core is INVALID COMMAND OPERATION CODE.
 */
export function installSscCommands(drive: TapeDrive): void {
  const rows: Array<[number, OpcodeEntry]> = [
    [
      SscOpcode.REWIND,
      { name: 'REWIND', handler: (c) => rewind(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.READ_BLOCK_LIMITS,
      {
        name: 'READ BLOCK LIMITS',
        handler: (c) => readBlockLimits(drive, c),
        concurrent: true,
        readOnly: true,
        timeouts: QUICK,
      },
    ],
    [SscOpcode.READ_6, { name: 'READ(6)', handler: (c) => read6(drive, c), readOnly: true, timeouts: DATA }],
    [
      SscOpcode.WRITE_6,
      {
        name: 'WRITE(6)',
        handler: (c) => write6(drive, c),
        dataOutLength: (cdb) => write6DataOutLength(drive, cdb),
        timeouts: DATA,
      },
    ],
    [
      SscOpcode.WRITE_FILEMARKS_6,
      { name: 'WRITE FILEMARKS(6)', handler: (c) => writeFilemarks6(drive, c), timeouts: DATA },
    ],
    [
      SscOpcode.SPACE_6,
      { name: 'SPACE(6)', handler: (c) => space(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.VERIFY_6,
      { name: 'VERIFY(6)', handler: (c) => verify6(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.SPACE_16,
      { name: 'SPACE(16)', handler: (c) => space(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.MODE_SELECT_6,
      {
        name: 'MODE SELECT(6)',
        handler: (c) => tapeModeSelect(drive, c),
        dataOutLength: modeSelectDataOutLength,
        timeouts: QUICK,
      },
    ],
    [
      SscOpcode.MODE_SELECT_10,
      {
        name: 'MODE SELECT(10)',
        handler: (c) => tapeModeSelect(drive, c),
        dataOutLength: modeSelectDataOutLength,
        timeouts: QUICK,
      },
    ],
    [
      SscOpcode.MODE_SENSE_6,
      { name: 'MODE SENSE(6)', handler: (c) => tapeModeSense(drive, c), readOnly: true, timeouts: QUICK },
    ],
    [
      SscOpcode.MODE_SENSE_10,
      { name: 'MODE SENSE(10)', handler: (c) => tapeModeSense(drive, c), readOnly: true, timeouts: QUICK },
    ],
    [SscOpcode.ERASE_6, { name: 'ERASE(6)', handler: (c) => erase(drive, c), timeouts: MOTION }],
    [
      SscOpcode.FORMAT_MEDIUM,
      { name: 'FORMAT MEDIUM', handler: (c) => formatMedium(drive, c), timeouts: FORMAT },
    ],
    [
      SscOpcode.SET_CAPACITY,
      { name: 'SET CAPACITY', handler: (c) => setCapacity(drive, c), timeouts: FORMAT },
    ],
    [
      SscOpcode.SEND_DIAGNOSTIC,
      {
        name: 'SEND DIAGNOSTIC',
        handler: (c) => sendDiagnostic(drive, c),
        dataOutLength: sendDiagnosticDataOutLength,
        timeouts: MOTION,
      },
    ],
    [
      SscOpcode.READ_BUFFER,
      { name: 'READ BUFFER', handler: (c) => readBuffer(drive, c), readOnly: true, timeouts: QUICK },
    ],
    [SscOpcode.LOAD_UNLOAD, { name: 'LOAD UNLOAD', handler: (c) => loadUnload(drive, c), timeouts: MOTION }],
    [
      SscOpcode.PREVENT_ALLOW_MEDIUM_REMOVAL,
      {
        name: 'PREVENT ALLOW MEDIUM REMOVAL',
        allowedWhenReserved: allowsRemoval,
        handler: (c) => preventAllow(drive, c),
        timeouts: QUICK,
      },
    ],
    [
      SscOpcode.LOCATE_10,
      { name: 'LOCATE(10)', handler: (c) => locate(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.LOCATE_16,
      { name: 'LOCATE(16)', handler: (c) => locate(drive, c), readOnly: true, timeouts: MOTION },
    ],
    [
      SscOpcode.READ_POSITION,
      { name: 'READ POSITION', handler: (c) => readPosition(drive, c), readOnly: true, timeouts: QUICK },
    ],
    [
      SscOpcode.REPORT_DENSITY_SUPPORT,
      {
        name: 'REPORT DENSITY SUPPORT',
        handler: (c) => reportDensitySupport(drive, c),
        readOnly: true,
        timeouts: QUICK,
      },
    ],
    [
      SscOpcode.LOG_SENSE,
      {
        name: 'LOG SENSE',
        handler: (c) => tapeLogSense(drive, c),
        allowedWhenReserved: true,
        timeouts: QUICK,
      },
    ],
    [SscOpcode.LOG_SELECT, { name: 'LOG SELECT', handler: (c) => tapeLogSelect(drive, c), timeouts: QUICK }],
    [
      SscOpcode.READ_ATTRIBUTE,
      { name: 'READ ATTRIBUTE', handler: (c) => readAttribute(drive, c), readOnly: true, timeouts: QUICK },
    ],
    [
      SscOpcode.WRITE_ATTRIBUTE,
      {
        name: 'WRITE ATTRIBUTE',
        handler: (c) => writeAttribute(drive, c),
        dataOutLength: writeAttributeDataOutLength,
        timeouts: QUICK,
      },
    ],
  ];
  // Drive encryption came with LTO-4.
  if (drive.personality.gen >= 4) rows.push(...securityProtocolRows(drive));
  for (const [opcode, entry] of rows) drive.table.set(opcode, entry);
}
