import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['*/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Every e2e file starts its own etcd and processes; two cores do not carry more at once.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
