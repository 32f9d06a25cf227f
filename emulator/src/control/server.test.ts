import { lstatSync, watch } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus } from '../events.js';
import { makeTempDir } from '../util/temp-dir.js';
import { EmulatorClient } from './client.js';
import type { Handlers } from './handlers.js';
import { ControlServer } from './server.js';

let tmp: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => (tmp = await makeTempDir()));
afterEach(async () => tmp.cleanup());

const handlers = { hello: async () => ({ node: 'node-1', generation: 5 }) } as unknown as Handlers;

describe('the control socket as it comes up', () => {
  it('is root-only from its creation and answers a client that connects the moment it appears', async () => {
    // Twenty starts: the window this closes lasted one threadpool round trip per start.
    for (let i = 0; i < 20; i++) {
      const socketPath = join(tmp.path, `control-${i}.sock`);
      const seen = new Promise<{ mode: number; client: Promise<EmulatorClient> }>((resolve) => {
        const watcher = watch(tmp.path, (_event, name) => {
          if (name !== `control-${i}.sock`) return;
          watcher.close();
          // Connect at once, as the nodeagent's retry loop does, and read the mode the file had.
          const mode = lstatSync(socketPath).mode & 0o777;
          resolve({ mode, client: EmulatorClient.connect(socketPath, { retryIntervalMs: 1 }) });
        });
      });
      const server = await ControlServer.listen({
        socketPath,
        handlers,
        events: new EventBus(),
        logger: pino({ level: 'silent' }),
      });
      const { mode, client } = await seen;
      const c = await client;
      try {
        expect(mode).toBe(0o600);
        const answer = await Promise.race([
          c.hello(),
          new Promise((resolve) => setTimeout(() => resolve('no answer within 2 s'), 2_000)),
        ]);
        expect(answer).toEqual({ node: 'node-1', generation: 5 });
      } finally {
        await c.close();
        await server.close();
      }
    }
  });
});
