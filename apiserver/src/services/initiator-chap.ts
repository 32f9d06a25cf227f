import { badRequest, type ChapInput, type Fabric } from '@vtl/api';
import type { ChapChange } from '@vtl/domain';

/**
 * The change a request's `chap` asks for (written with the record by domain's
 * records/initiators.ts); undefined when it leaves CHAP alone (PUT without it).
 */
export function chapChange(input: ChapInput | null | undefined, fabric: Fabric): ChapChange | undefined {
  if (input === undefined) return undefined;
  if (input === null) return { record: null, secret: null };
  if (fabric !== 'iscsi')
    throw badRequest('chap is for iSCSI initiators (fabric iscsi); Fibre Channel logins have no CHAP.');
  return {
    record: { username: input.username, mutual_username: input.mutual_username ?? '' },
    secret: {
      username: input.username,
      secret: input.secret,
      mutual_username: input.mutual_username ?? '',
      mutual_secret: input.mutual_secret ?? '',
    },
  };
}
