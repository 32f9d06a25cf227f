import { createRequire } from 'node:module';
import { readConfig } from './config.js';
import { EXIT } from './exit.js';
import { request } from './http.js';

export const VERSION_USAGE = 'vtl version';
export const VERSION_HELP = `Prints the version of vtl and, when logged in, of the appliance (GET /healthz).
`;

/** This package's version (cli/package.json, one directory above dist/). */
export const CLI_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

export async function version(out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  out.write(`vtl ${CLI_VERSION}\n`);
  const config = await readConfig();
  if (!config) return EXIT.ok;
  try {
    const health = (await request(config, 'GET', '/healthz', undefined, { timeoutMs: 10_000, accept: [503] }))
      .body;
    out.write(`appliance ${health.version} at ${config.server}\n`);
  } catch (e) {
    err.write(`appliance at ${config.server}: ${(e as Error).message}\n`);
    return EXIT.unavailable;
  }
  return EXIT.ok;
}
