import { VtlError, keys } from '@vtl/api';
import { z } from 'zod';
import type { Store } from '@vtl/store';

const Drain = z.object({ draining: z.boolean() });

/** 409 for job-creating and disruptive calls while a graceful restart drains (§3.5). */
export async function refuseWhileDraining(store: Store, what: string): Promise<void> {
  const drain = await store.get(keys.drain, Drain);
  if (drain?.value.draining)
    throw new VtlError(
      'draining',
      `${what} is refused while a graceful restart drains; retry once it restarted.`,
    );
}
