import { VtlError, ErrorCode } from '@vtl/api';

/** One mint a reconcile asks for. */
export interface MintItem {
  label: string;
  slot: number;
}

/** What a flush answers for one item: done, or the emulator's refusal. */
export type MintOutcome = MintItem | (MintItem & { error: { code: string; message: string } });

interface Waiting extends MintItem {
  resolve: () => void;
  reject: (err: Error) => void;
}

/** How long the first mint of a batch waits for others to join it. */
const GATHER_MS = 5;

/**
 * Gathers the mints that reconciles ask for at about the same time into one call per library,
 * so a 400-cartridge mint is a few emulator calls, event writes and status publishes instead
 * of 400 of each. Each caller still gets its own answer. One flush runs at a time; what
 * arrives meanwhile goes into the next.
 */
export class MintBatcher {
  private pending = new Map<number, Waiting[]>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly flush: (library: number, items: MintItem[]) => Promise<MintOutcome[]>) {}

  mint(library: number, item: MintItem): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.pending.get(library) ?? [];
      list.push({ ...item, resolve, reject });
      this.pending.set(library, list);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer || this.running || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.flushAll().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, GATHER_MS);
  }

  private async flushAll(): Promise<void> {
    const batches = this.pending;
    this.pending = new Map();
    await Promise.all([...batches].map(([library, waiting]) => this.flushOne(library, waiting)));
  }

  private async flushOne(library: number, waiting: Waiting[]): Promise<void> {
    let outcomes: MintOutcome[];
    try {
      outcomes = await this.flush(
        library,
        waiting.map(({ label, slot }) => ({ label, slot })),
      );
    } catch (err) {
      for (const w of waiting) w.reject(err as Error);
      return;
    }
    waiting.forEach((w, i) => {
      const out = outcomes[i];
      if (!out) w.reject(new VtlError('internal', `The emulator gave no answer for ${w.label}.`));
      else if ('error' in out) {
        const code = ErrorCode.safeParse(out.error.code);
        w.reject(new VtlError(code.success ? code.data : 'internal', out.error.message));
      } else w.resolve();
    });
  }
}
