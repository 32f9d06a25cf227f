/** SCSI status codes (SAM-5) that devices in this emulator return. */
export const ScsiStatus = {
  GOOD: 0x00,
  CHECK_CONDITION: 0x02,
  BUSY: 0x08,
  RESERVATION_CONFLICT: 0x18,
  TASK_SET_FULL: 0x28,
  TASK_ABORTED: 0x40,
} as const;

/** Sense keys (SPC-4 table 48). */
export const SenseKey = {
  NO_SENSE: 0x0,
  RECOVERED_ERROR: 0x1,
  NOT_READY: 0x2,
  MEDIUM_ERROR: 0x3,
  HARDWARE_ERROR: 0x4,
  ILLEGAL_REQUEST: 0x5,
  UNIT_ATTENTION: 0x6,
  DATA_PROTECT: 0x7,
  BLANK_CHECK: 0x8,
  VENDOR_SPECIFIC: 0x9,
  COPY_ABORTED: 0xa,
  ABORTED_COMMAND: 0xb,
  VOLUME_OVERFLOW: 0xd,
  MISCOMPARE: 0xe,
} as const;

/** Peripheral device types (SPC-4 table 142) the appliance presents. */
export const PeripheralType = {
  DIRECT_ACCESS: 0x00,
  SEQUENTIAL_ACCESS: 0x01,
  MEDIUM_CHANGER: 0x08,
  UNKNOWN: 0x1f,
} as const;

/** Operation codes every device type shares (SPC-4), plus the few the transport needs to know. */
export const Opcode = {
  TEST_UNIT_READY: 0x00,
  REQUEST_SENSE: 0x03,
  INQUIRY: 0x12,
  RESERVE_6: 0x16,
  RELEASE_6: 0x17,
  MODE_SELECT_6: 0x15,
  MODE_SENSE_6: 0x1a,
  RECEIVE_DIAGNOSTIC_RESULTS: 0x1c,
  SEND_DIAGNOSTIC: 0x1d,
  LOG_SELECT: 0x4c,
  LOG_SENSE: 0x4d,
  MODE_SELECT_10: 0x55,
  RESERVE_10: 0x56,
  RELEASE_10: 0x57,
  MODE_SENSE_10: 0x5a,
  PERSISTENT_RESERVE_IN: 0x5e,
  PERSISTENT_RESERVE_OUT: 0x5f,
  REPORT_LUNS: 0xa0,
  MAINTENANCE_IN: 0xa3,
  MAINTENANCE_OUT: 0xa4,
} as const;

/** Service actions of MAINTENANCE IN used here. */
export const MaintenanceIn = {
  REPORT_SUPPORTED_OPERATION_CODES: 0x0c,
} as const;

/**
 * Additional sense code / qualifier pairs, as `[asc, ascq]`. Only the ones the SCSI core raises
 * itself live here; device models keep their own next to their handlers.
 */
export const Asc = {
  NO_ADDITIONAL_SENSE: [0x00, 0x00],
  LUN_NOT_READY_CAUSE_NOT_REPORTABLE: [0x04, 0x00],
  LUN_NOT_READY_BECOMING_READY: [0x04, 0x01],
  PARAMETER_LIST_LENGTH_ERROR: [0x1a, 0x00],
  INVALID_COMMAND_OPERATION_CODE: [0x20, 0x00],
  INVALID_FIELD_IN_CDB: [0x24, 0x00],
  LOGICAL_UNIT_NOT_SUPPORTED: [0x25, 0x00],
  INVALID_FIELD_IN_PARAMETER_LIST: [0x26, 0x00],
  INVALID_RELEASE_OF_PERSISTENT_RESERVATION: [0x26, 0x04],
  NOT_READY_TO_READY_CHANGE: [0x28, 0x00],
  IMPORT_OR_EXPORT_ELEMENT_ACCESSED: [0x28, 0x01],
  POWER_ON_RESET_OR_BUS_DEVICE_RESET: [0x29, 0x00],
  POWER_ON_OCCURRED: [0x29, 0x01],
  BUS_DEVICE_RESET_FUNCTION: [0x29, 0x03],
  I_T_NEXUS_LOSS: [0x29, 0x07],
  MODE_PARAMETERS_CHANGED: [0x2a, 0x01],
  RESERVATIONS_PREEMPTED: [0x2a, 0x03],
  RESERVATIONS_RELEASED: [0x2a, 0x04],
  REGISTRATIONS_PREEMPTED: [0x2a, 0x05],
  COMMANDS_CLEARED_BY_ANOTHER_INITIATOR: [0x2f, 0x00],
  MEDIUM_NOT_PRESENT: [0x3a, 0x00],
  INQUIRY_DATA_HAS_CHANGED: [0x3f, 0x03],
  REPORTED_LUNS_DATA_HAS_CHANGED: [0x3f, 0x0e],
  INTERNAL_TARGET_FAILURE: [0x44, 0x00],
  PROTOCOL_SERVICE_CRC_ERROR: [0x47, 0x05],
  MEDIUM_REMOVAL_PREVENTED: [0x53, 0x02],
} as const satisfies Record<string, readonly [number, number]>;
export type AscPair = readonly [asc: number, ascq: number];
