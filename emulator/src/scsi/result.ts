import { ScsiStatus } from './constants.js';
import { buildSense, type SenseSpec } from './sense.js';
import type { ScsiResult } from './types.js';

/** GOOD status, optionally with data-in. */
export function good(dataIn?: Buffer): ScsiResult {
  return dataIn ? { status: ScsiStatus.GOOD, dataIn } : { status: ScsiStatus.GOOD };
}

/** CHECK CONDITION with fixed-format sense. */
export function checkCondition(sense: SenseSpec | Buffer, dataIn?: Buffer): ScsiResult {
  const buf = Buffer.isBuffer(sense) ? sense : buildSense(sense);
  return dataIn
    ? { status: ScsiStatus.CHECK_CONDITION, sense: buf, dataIn }
    : { status: ScsiStatus.CHECK_CONDITION, sense: buf };
}

export function reservationConflict(): ScsiResult {
  return { status: ScsiStatus.RESERVATION_CONFLICT };
}

export function busy(): ScsiResult {
  return { status: ScsiStatus.BUSY };
}
