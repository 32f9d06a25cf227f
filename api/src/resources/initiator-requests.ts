import { z } from 'zod';
import { ChapInput } from './chap.js';
import { InitiatorSpec, InitiatorUpdate } from './initiator.js';

/**
 * Body of POST /api/targets/acls: the TapeInitiator spec plus, for an iSCSI initiator, its CHAP
 * set-up. Kept apart from InitiatorSpec so the CRD never carries a secret.
 */
export const CreateInitiatorRequest = InitiatorSpec.extend({
  chap: ChapInput.optional().describe('iSCSI only: CHAP credentials the initiator must log in with'),
});
export type CreateInitiatorRequest = z.infer<typeof CreateInitiatorRequest>;

/** Body of PUT /api/targets/acls/{wwpn}: `chap` replaces the whole CHAP set-up, null removes it. */
export const UpdateInitiatorRequest = InitiatorUpdate.extend({
  chap: ChapInput.nullable()
    .optional()
    .describe('iSCSI only: new CHAP set-up (replaces the stored one); null turns CHAP off'),
});
export type UpdateInitiatorRequest = z.infer<typeof UpdateInitiatorRequest>;
