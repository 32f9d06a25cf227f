import { z } from 'zod';

/**
 * GET /api/throughput (not in the spec; docs/api.md): the recent history of the appliance's own
 * counters, sampled by the apiserver, so a chart opened now already shows the last minutes.
 * A sample is `[unix ms, counter...]`; a rate is the difference of two samples.
 */
export const ThroughputHistory = z.object({
  interval_sec: z.number().int().describe('Seconds between samples'),
  window_sec: z.number().int().describe('How far back samples are kept'),
  drives: z.array(
    z.object({
      library: z.number().int(),
      index: z.number().int(),
      serial: z.string(),
      samples: z
        .array(z.tuple([z.number(), z.number().int(), z.number().int()]))
        .describe('[unix ms, blocks_written, blocks_read], oldest first'),
    }),
  ),
  jobs: z.array(
    z.object({
      id: z.number().int(),
      samples: z
        .array(z.tuple([z.number(), z.number().int()]))
        .describe('[unix ms, bytes_done], oldest first'),
    }),
  ),
});
export type ThroughputHistory = z.infer<typeof ThroughputHistory>;
