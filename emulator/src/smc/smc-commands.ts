import { allowsRemoval } from '../scsi/cdb.js';
import type { OpcodeEntry } from '../scsi/dispatch.js';
import { modeSelectDataOutLength } from '../scsi/mode-parameters.js';
import { changerLogSense } from './changer-log-pages.js';
import { changerModeSelect, changerModeSense } from './changer-mode-pages.js';
import type { MediaChanger } from './media-changer.js';
import {
  changerPreventAllow,
  initializeElementStatus,
  initializeElementStatusWithRange,
  moveMedium,
  positionToElement,
} from './move-medium.js';
import { readElementStatus } from './read-element-status.js';

/** Medium changer operation codes (SMC-3 table 3) this library answers. */
export const SmcOpcode = {
  INITIALIZE_ELEMENT_STATUS: 0x07,
  MODE_SELECT_6: 0x15,
  MODE_SENSE_6: 0x1a,
  PREVENT_ALLOW_MEDIUM_REMOVAL: 0x1e,
  POSITION_TO_ELEMENT: 0x2b,
  INITIALIZE_ELEMENT_STATUS_WITH_RANGE: 0x37,
  LOG_SENSE: 0x4d,
  MODE_SELECT_10: 0x55,
  MODE_SENSE_10: 0x5a,
  MOVE_MEDIUM: 0xa5,
  READ_ELEMENT_STATUS: 0xb8,
} as const;

/** Robot motion: IBM documents minutes for a full inventory, seconds for a move. */
const MOTION = { nominal: 60, recommended: 600 };
const QUICK = { nominal: 1, recommended: 60 };

/** The SMC rows of the changer's opcode table (mhvtl's `smc_ops` template). */
export function installSmcCommands(changer: MediaChanger): void {
  const rows: Array<[number, OpcodeEntry]> = [
    [
      SmcOpcode.INITIALIZE_ELEMENT_STATUS,
      {
        name: 'INITIALIZE ELEMENT STATUS',
        handler: (c) => initializeElementStatus(changer, c),
        timeouts: MOTION,
      },
    ],
    [
      SmcOpcode.INITIALIZE_ELEMENT_STATUS_WITH_RANGE,
      {
        name: 'INITIALIZE ELEMENT STATUS WITH RANGE',
        handler: (c) => initializeElementStatusWithRange(changer, c),
        timeouts: MOTION,
      },
    ],
    [
      SmcOpcode.MODE_SELECT_6,
      {
        name: 'MODE SELECT(6)',
        handler: (c) => changerModeSelect(changer, c),
        dataOutLength: modeSelectDataOutLength,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.MODE_SELECT_10,
      {
        name: 'MODE SELECT(10)',
        handler: (c) => changerModeSelect(changer, c),
        dataOutLength: modeSelectDataOutLength,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.MODE_SENSE_6,
      {
        name: 'MODE SENSE(6)',
        handler: (c) => changerModeSense(changer, c),
        readOnly: true,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.MODE_SENSE_10,
      {
        name: 'MODE SENSE(10)',
        handler: (c) => changerModeSense(changer, c),
        readOnly: true,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.PREVENT_ALLOW_MEDIUM_REMOVAL,
      {
        name: 'PREVENT ALLOW MEDIUM REMOVAL',
        handler: (c) => changerPreventAllow(changer, c),
        allowedWhenReserved: allowsRemoval,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.POSITION_TO_ELEMENT,
      {
        name: 'POSITION TO ELEMENT',
        handler: (c) => positionToElement(changer, c),
        readOnly: true,
        timeouts: MOTION,
      },
    ],
    [
      SmcOpcode.LOG_SENSE,
      {
        name: 'LOG SENSE',
        handler: (c) => changerLogSense(changer, c),
        allowedWhenReserved: true,
        timeouts: QUICK,
      },
    ],
    [
      SmcOpcode.MOVE_MEDIUM,
      { name: 'MOVE MEDIUM', handler: (c) => moveMedium(changer, c), timeouts: MOTION },
    ],
    [
      SmcOpcode.READ_ELEMENT_STATUS,
      {
        name: 'READ ELEMENT STATUS',
        handler: (c) => readElementStatus(changer, c),
        readOnly: true,
        timeouts: QUICK,
      },
    ],
  ];
  for (const [opcode, entry] of rows) changer.table.set(opcode, entry);
}
