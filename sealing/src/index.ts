/** Secrets sealed at rest: the key file, the envelope, and the sealer the store opens records with. */
export {
  ensureSealingKeyFile,
  formatKeyFile,
  isEnvelope,
  isSecretKey,
  newSealingKey,
  parseKeyFile,
  RecordSealing,
  Sealer,
  SECRETS_PREFIX,
  writeKeyFile,
  type SealedEnvelope,
  type SealingKey,
} from './sealing.js';
