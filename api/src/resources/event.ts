import { z } from 'zod';

/** §2.19 journal record; `data` carries the kind-specific payload the stream sends. */
export const EventRecord = z.object({
  id: z.number().int(),
  ts: z.string(),
  kind: z.string(),
  subject: z.string(),
  detail: z.string(),
  data: z.record(z.string(), z.unknown()).default({}),
});
export type EventRecord = z.infer<typeof EventRecord>;

/** The journal keeps this many newest events; older ones are trimmed as new ones arrive. */
export const EVENT_JOURNAL_BOUND = 10_000;

export const Event = EventRecord.omit({ data: true });
export type Event = z.infer<typeof Event>;

export const NewEvent = z.object({
  kind: z.string(),
  subject: z.string(),
  detail: z.string().default(''),
  data: z.record(z.string(), z.unknown()).default({}),
});
export type NewEvent = z.input<typeof NewEvent>;
