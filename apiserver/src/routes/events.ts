import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { Event, EVENT_JOURNAL_BOUND, eventView } from '@vtl/api';
import { z } from 'zod';
import type { AppContext } from '../context.js';

const RECENT = 200;
const SEARCH_DEFAULT_LIMIT = 500;

const SearchQuery = z.object({
  q: z.string().default(''),
  kind: z.string().default('all'),
  // The spec sets no maximum: a client asking for more than the journal can hold gets all it holds.
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(SEARCH_DEFAULT_LIMIT)
    .transform((n) => Math.min(n, EVENT_JOURNAL_BOUND)),
});

export async function eventRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/events/recent',
    {
      schema: { response: { 200: z.array(Event) } },
      config: { role: 'read-only', doc: { summary: 'The 200 newest events' } },
    },
    async () => (await ctx.journal.recent(RECENT)).map(eventView),
  );

  r.get(
    '/api/events/search',
    {
      schema: { querystring: SearchQuery, response: { 200: z.array(Event) } },
      config: {
        role: 'read-only',
        doc: {
          summary: 'Events by substring and kind, newest first',
        },
      },
    },
    async (request) => {
      const query = request.query;
      const kind = query.kind === 'all' ? '' : query.kind;
      return (await ctx.journal.search({ q: query.q, kind, limit: query.limit })).map(eventView);
    },
  );
}
