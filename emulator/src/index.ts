export * from './config.js';
export * from './dataplane.js';
export * from './emulator.js';
export * from './events.js';
export * from './library-ops.js';
export * from './control/protocol.js';
export { DEFAULT_TCP_CONGESTION, isCongestionControlName } from './transport/iscsi/tcp-tuning.js';
export * from './control/client.js';
export * from './control/server.js';
export * from './control/handlers.js';
export * from './inventory/elements.js';
export * from './inventory/drive-state.js';
export * from './inventory/inventory-file.js';
export * from './inventory/library-inventory.js';
export * from './media/errors.js';
export * from './media/layout.js';
export * from './media/index-file.js';
export * from './media/cartridge.js';
export * from './media/space.js';
export * from './media/mam.js';
export * from './media/mint.js';
export * from './media/image.js';
export * from './media/vol1.js';
export * from './scsi/constants.js';
export * from './scsi/types.js';
export * from './scsi/cdb.js';
export * from './scsi/sense.js';
export * from './scsi/result.js';
export * from './scsi/dispatch.js';
export * from './scsi/inquiry.js';
export * from './scsi/lun.js';
export * from './scsi/lun-router.js';
export * from './scsi/report-luns.js';
export * from './scsi/unit-attention.js';
export * from './scsi/reservation.js';
export * from './scsi/device-base.js';
export { type SpcHost, type VpdPageBuilder, defaultVpdPages } from './scsi/spc-commands.js';
export {
  type Authorization,
  type IscsiSessionInfo,
  type IscsiTarget,
  type IscsiTargetOptions,
  startIscsiTarget,
} from './transport/iscsi/target.js';
export { DEFAULT_TARGET_LIMITS, type TargetLimits } from './transport/iscsi/negotiation.js';
export type { ChapCredentials } from './transport/iscsi/chap.js';
export { crc32c } from './util/crc32c.js';
export { RamDisk } from './testing/ram-disk.js';
export * from './dataplane-luns.js';
export * from './ssc/lto-personality.js';
export * from './ssc/drive-identity.js';
export * from './ssc/tape-drive.js';
export * from './ssc/tape-mode-state.js';
export * from './ssc/tape-sense.js';
export * from './ssc/tape-alert.js';
export * from './smc/element-map.js';
export * from './smc/media-changer.js';
export { iscsiTransport, nodeTargetName } from './transport/iscsi-transport.js';
export { Cdb } from './testing/scsi-cdbs.js';
