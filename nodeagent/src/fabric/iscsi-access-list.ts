import { InitiatorChapSecret, keys, nameFromKey, scopeIncludes, type InitiatorRecord } from '@vtl/api';
import type { InitiatorAccess } from '@vtl/emulator';
import type { Store } from '@vtl/store';

/** Every initiator's CHAP secrets by registry name (the Store unseals them). */
export async function readChapSecrets(store: Store): Promise<Map<string, InitiatorChapSecret>> {
  const list = await store.list(keys.initiatorSecrets.prefix, InitiatorChapSecret);
  return new Map(list.items.map((i) => [nameFromKey(i.key), i.value] as const));
}

/**
 * The iSCSI registry as the emulator takes it (`set_access`): each iSCSI initiator with the
 * served libraries in its scope and, when it has CHAP, its credentials. The secret record is
 * written with the registry record in one transaction but read apart from it, so it is taken
 * whole (usernames included) and wins whenever it exists. An initiator whose record names CHAP
 * but has no secret record is left out (refused: fail closed) and reported.
 */
export function iscsiAccessList(
  initiators: readonly InitiatorRecord[],
  secrets: ReadonlyMap<string, InitiatorChapSecret>,
  served: readonly number[],
): { access: InitiatorAccess[]; problems: string[] } {
  const access: InitiatorAccess[] = [];
  const problems: string[] = [];
  for (const r of initiators) {
    if (r.fabric !== 'iscsi') continue;
    const entry: InitiatorAccess = {
      name: r.wwpn,
      libraries: served.filter((id) => scopeIncludes(r.libraries, id)),
    };
    const chap = secrets.get(r.wwpn);
    if (chap?.username && chap.secret) {
      entry.chap = {
        username: chap.username,
        secret: chap.secret,
        ...(chap.mutual_username && chap.mutual_secret
          ? { mutual_username: chap.mutual_username, mutual_secret: chap.mutual_secret }
          : {}),
      };
    } else if (r.chap) {
      problems.push(
        `iSCSI initiator ${r.wwpn} has CHAP set but no secret stored, so it is refused; set its chap again with PUT /api/targets/acls/${r.wwpn}`,
      );
      continue;
    }
    access.push(entry);
  }
  return { access, problems };
}
