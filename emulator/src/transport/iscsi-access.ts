import type { InitiatorAccess } from '../control/protocol.js';
import type { LunAssignment } from '../dataplane-luns.js';
import type { LunMap, ScsiDevice } from '../scsi/types.js';
import type { ChapCredentials } from './iscsi/chap.js';

const EMPTY: LunMap = new Map();

/**
 * Who may log in to the iSCSI target and which LUNs each initiator sees: the nodeagent's
 * initiator registry, replaced as a whole on every push. Names compare case-insensitively
 * (RFC 3722). The LUN map of an initiator is worked out once per registry version, so the
 * per-command lookup stays a map read.
 */
export class IscsiAccessTable {
  private access = new Map<string, ReadonlySet<number>>();
  private chap = new Map<string, ChapCredentials>();
  private cache = new Map<string, LunMap>();

  constructor(
    private readonly luns: ReadonlyMap<number, ScsiDevice>,
    private readonly layout: readonly LunAssignment[],
    /** Bootstrap allow-list from the emulator configuration: every library until the first push. */
    bootstrap: readonly string[],
    private readonly open: boolean,
  ) {
    const everyLibrary = [...new Set(layout.map((r) => r.library))];
    this.replace(bootstrap.map((name) => ({ name, libraries: everyLibrary })));
  }

  /** Installs a new registry; returns the names that lost access (their sessions must drop). */
  replace(initiators: readonly InitiatorAccess[]): string[] {
    const next = new Map(initiators.map((i) => [i.name.toLowerCase(), new Set(i.libraries)] as const));
    const removed = [...this.access.keys()].filter((name) => !next.has(name));
    this.access = next;
    // Read at each login: a CHAP change applies to the next login, live sessions go on.
    this.chap = new Map(initiators.flatMap((i) => (i.chap ? [[i.name.toLowerCase(), i.chap] as const] : [])));
    this.cache.clear();
    return removed;
  }

  /** Login decision: registered (even with no library in scope) or the demo switch is on. */
  allows(initiatorName: string): boolean {
    return this.open || this.access.has(initiatorName.toLowerCase());
  }

  /** The CHAP credentials an initiator must log in with; undefined: none (AuthMethod=None). */
  chapFor(initiatorName: string): ChapCredentials | undefined {
    return this.chap.get(initiatorName.toLowerCase());
  }

  /** The LUNs an initiator sees now: only those of libraries in its scope. */
  lunsFor(initiatorName: string): LunMap {
    if (this.open) return this.luns as LunMap;
    const name = initiatorName.toLowerCase();
    const cached = this.cache.get(name);
    if (cached) return cached;
    const libraries = this.access.get(name);
    if (!libraries) return EMPTY;
    const map: LunMap = new Map(
      this.layout.filter((r) => libraries.has(r.library)).map((r) => [r.lun, this.luns.get(r.lun)!] as const),
    );
    this.cache.set(name, map);
    return map;
  }
}
