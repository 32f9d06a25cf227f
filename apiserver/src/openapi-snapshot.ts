import { pino } from 'pino';
import type { EventJournal, Store } from '@vtl/store';
import type { ViewCache } from './services/view-cache.js';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { VERSION } from './version.js';

/**
 * The OpenAPI document without a running appliance: the routes are built against a store that
 * refuses every use, and only the public document route is asked. The console's build generates
 * its typed client from this, so the console and the API cannot drift.
 */
export async function openApiSnapshot(): Promise<unknown> {
  const refuse = new Proxy(
    {},
    {
      get: (_target, prop) => {
        throw new Error(`the OpenAPI snapshot touched the store (${String(prop)})`);
      },
    },
  );
  const ctx = {
    store: refuse as Store,
    journal: refuse as EventJournal,
    // Given, so buildApp does not start a watch cache on the refusing store.
    views: refuse as ViewCache,
    config: loadConfig({}),
    logger: pino({ level: 'silent' }),
    version: VERSION,
    startedAt: new Date(),
  };
  const app = await buildApp(ctx);
  try {
    const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${res.statusCode}`);
    return res.json();
  } finally {
    await app.close();
  }
}

// `node apiserver/dist/openapi-snapshot.js` prints the document.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  openApiSnapshot().then(
    (doc) => process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`),
    (err: Error) => {
      console.error(`OpenAPI snapshot failed: ${err.message}`);
      process.exit(1);
    },
  );
}
