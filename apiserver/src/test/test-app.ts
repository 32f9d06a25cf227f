import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { EventJournal, Store } from '@vtl/store';
import { startTestEtcd, type TestEtcd } from '@vtl/store/testing';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { ensureIdentity } from '../services/identity.js';
import { ensureInitialAdmin, INITIAL_PASSWORD_FILE } from '../services/users.js';

/** The HTTPS app of the apiserver on a real etcd, driven with inject(); logged in as admin. */
export interface TestApp {
  app: FastifyInstance;
  store: Store;
  stateDir: string;
  machineIdFile: string;
  admin: { authorization: string };
  /** One request as admin, with an optional JSON body. */
  call(method: AdminMethod, url: string, payload?: object): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export type AdminMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const etcd: TestEtcd = await startTestEtcd();
  const stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-apiserver-'));
  const logger = pino({ level: 'silent' });
  const store = await Store.connect({
    endpoints: [etcd.endpoint],
    logger,
    sealingKeyFile: etcd.sealingKeyFile,
  });
  await ensureIdentity(store);
  await ensureInitialAdmin(store, stateDir, logger);
  // The machine identity the support fingerprint derives from: a file the test may rewrite.
  const machineIdFile = path.join(stateDir, 'machine-id');
  await fs.writeFile(machineIdFile, 'machine-a\n');
  const config = loadConfig({ VTL_STATE_DIR: stateDir, VTL_MACHINE_ID_FILE: machineIdFile, ...env });
  const app = await buildApp({
    store,
    journal: new EventJournal(store),
    config,
    logger,
    version: 'v0.0.0',
    startedAt: new Date(),
  });
  const password = (await fs.readFile(path.join(stateDir, INITIAL_PASSWORD_FILE), 'utf8')).trim();
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: 'admin', password },
  });
  if (login.statusCode !== 200) throw new Error(`admin login failed: ${login.body}`);
  const admin = { authorization: `Bearer ${login.json().token}` };
  return {
    app,
    store,
    stateDir,
    machineIdFile,
    admin,
    call: (method, url, payload) =>
      app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) }),
    close: async () => {
      await app.close();
      await store.close();
      await etcd.stop();
      await fs.rm(stateDir, { recursive: true, force: true });
    },
  };
}
