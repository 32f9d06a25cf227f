/**
 * Runs `step`, adding its duration in ms to `stages[stage]` when stage times are kept (exports'
 * and imports' optional breakdowns of where their time goes; the benchmark prints them).
 */
export async function timedStage<S extends object, T>(
  stages: S | undefined,
  stage: { [K in keyof S]: S[K] extends number ? K : never }[keyof S],
  step: () => Promise<T>,
): Promise<T> {
  if (!stages) return step();
  const t0 = performance.now();
  try {
    return await step();
  } finally {
    (stages[stage] as number) += performance.now() - t0;
  }
}
