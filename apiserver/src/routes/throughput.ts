import type { FastifyInstance } from 'fastify';
import { ThroughputHistory } from '@vtl/api';
import type { AppContext } from '../context.js';
import { ThroughputSampler } from '../services/throughput-history.js';
import { viewsOf } from '../services/views.js';

/** GET /api/throughput: the recent history behind the console's throughput charts. */
export async function throughputRoutes(app: FastifyInstance, ctx: AppContext) {
  const views = viewsOf(ctx);
  const sampler = new ThroughputSampler(() => {
    const s = views.snapshot();
    return { drives: s.nodes.flatMap((n) => n.libraries.flatMap((l) => l.drives)), jobs: s.jobs };
  });
  // On listen, not at registration: the OpenAPI snapshot builds the routes without a store.
  app.addHook('onListen', async () => void sampler.start());
  app.addHook('onClose', async () => sampler.stop());
  app.get(
    '/api/throughput',
    {
      config: {
        role: 'read-only',
        doc: {
          summary:
            "Recent history of each drive's block counters and each moving job's bytes (not in the spec)",
          response: ThroughputHistory,
        },
      },
    },
    async () => sampler.history(),
  );
}
