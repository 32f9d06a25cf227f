import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { listNodeStatus, loadSnapshot } from '@vtl/domain';
import { pack } from 'tar-stream';
import type { AppContext } from '../context.js';
import { AuditLog } from '@vtl/store';
import { secretRedactor } from './bundle-redaction.js';
import { settingsView } from './settings.js';
import { statusView } from './status-view.js';
import { systemInfo } from './system-info.js';
import { poolRow } from './pools.js';
import { libraryRow } from '../routes/libraries.js';

const RECENT_EVENTS = 200;
const RECENT_AUDIT = 200;

/** Log files of the state dir; no database, key or password file lives under logs/. */
async function logFiles(stateDir: string): Promise<Array<[string, string]>> {
  const dir = path.join(stateDir, 'logs');
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.log'));
  return Promise.all(
    names
      .sort()
      .map(async (n): Promise<[string, string]> => [
        `logs/${n}`,
        await fs.readFile(path.join(dir, n), 'utf8'),
      ]),
  );
}

/**
 * The support bundle (§4.2 rule 5): logs and the appliance's views as JSON, every file passed
 * through the redactor. Built in memory: logs are size-rotated, so the archive stays modest.
 */
export async function supportBundle(ctx: AppContext): Promise<Buffer> {
  const { store, config } = ctx;
  const redact = await secretRedactor(store, config.stateDir);
  const snapshot = await loadSnapshot(store);
  const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';
  const files: Array<[string, string]> = [
    ['status.json', json(statusView(snapshot))],
    ['system.json', json(await systemInfo(ctx))],
    // Every setting key is non-secret today (§2.13); the redactor is the guard if one becomes so.
    ['settings.json', json(await settingsView(store))],
    ['events.json', json(await ctx.journal.recent(RECENT_EVENTS))],
    ['audit.json', json((await new AuditLog(store).page(RECENT_AUDIT)).entries)],
    ['pools.json', json(snapshot.pools.map((p) => poolRow(snapshot, p)))],
    ['libraries.json', json(snapshot.libraries.map((l) => libraryRow(snapshot, l)))],
    ['nodes.json', json(await listNodeStatus(store))],
    ...(await logFiles(config.stateDir)),
  ];
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => (tar.on('end', resolve), tar.on('error', reject)));
  for (const [name, text] of files) tar.entry({ name, mode: 0o644 }, redact(text));
  tar.finalize();
  await done;
  return promisify(gzip)(Buffer.concat(chunks));
}
