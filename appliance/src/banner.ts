import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { ApplianceConfig } from './config.js';

/**
 * The launcher's logger: readable lines when a person watches the terminal, JSON lines for
 * anything else (a pipe, a file, journald), which is what log tooling wants.
 */
export function launcherLogger(name: string, tty = process.stdout.isTTY === true): Logger {
  if (!tty) return pino({ name }, pino.destination({ dest: 1, sync: true }));
  return pino(
    { name },
    pretty({
      colorize: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
      singleLine: true,
      sync: true,
    }),
  );
}

/**
 * Where a child's output goes besides its log file: at a terminal, through pino-pretty, one line
 * per entry (a request is one line, not its object spread over eight); else stdout unchanged.
 */
export function terminalSink(tty = process.stdout.isTTY === true): NodeJS.WritableStream {
  if (!tty) return process.stdout;
  return pretty({
    colorize: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
    destination: process.stdout,
    sync: true,
  });
}

/** The node's iSCSI target name, as the emulator's nodeTargetName builds it. */
export const targetName = (node: string) =>
  `iqn.2026-11.io.vtl:${node.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;

export interface Banner {
  console: string;
  adminPasswordFile: string | undefined;
  iscsiPortal: string;
  iscsiTarget: string;
  /** False when the operator gave the apiserver its own certificate (VTL_TLS_CERT_FILE). */
  selfSigned: boolean;
}

export function bannerFacts(config: ApplianceConfig): Banner {
  const host = config.bind === '0.0.0.0' || config.bind === '::' ? os.hostname() : config.bind;
  const file = path.join(config.stateDir, 'initial-admin-password');
  return {
    console: `https://${host.includes(':') ? `[${host}]` : host}:${config.httpsPort}/`,
    adminPasswordFile: fs.existsSync(file) ? file : undefined,
    iscsiPortal: `${host}:${config.iscsiPort}`,
    iscsiTarget: targetName(config.node),
    selfSigned: !config.tlsCertFile,
  };
}

/** The few lines a newcomer needs to go on: where to click, how to log in, what to connect. */
export function bannerText(b: Banner): string {
  const login = b.adminPasswordFile
    ? `user admin, password in ${b.adminPasswordFile}`
    : 'user admin (the initial password was changed)';
  return [
    '',
    '  VTL appliance ready',
    `  Web console   ${b.console}${b.selfSigned ? '  (self-signed certificate)' : ''}`,
    `  Log in        ${login}`,
    `  iSCSI portal  ${b.iscsiPortal}`,
    `  iSCSI target  ${b.iscsiTarget}`,
    '  Stop          Ctrl-C (state stays on disk)',
    '',
  ].join('\n');
}

/** Whether the apiserver answers /healthz (our own child on its bind address; no credential). */
function healthy(config: ApplianceConfig): Promise<boolean> {
  const host = config.bind === '0.0.0.0' ? '127.0.0.1' : config.bind === '::' ? '::1' : config.bind;
  return new Promise((resolve) => {
    const req = https.get(
      // The certificate is the appliance's own self-signed one; this only asks whether it is up.
      { host, port: config.httpsPort, path: '/healthz', rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/**
 * Once the apiserver answers, prints the banner to a terminal, or logs the same facts as one JSON
 * line otherwise. Gives up quietly after `timeoutMs` (the supervisor logs why a child is down).
 */
export async function announceWhenReady(
  config: ApplianceConfig,
  logger: Logger,
  opts: { timeoutMs?: number; tty?: boolean; out?: NodeJS.WritableStream; stopped?: () => boolean } = {},
): Promise<boolean> {
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  while (Date.now() < deadline && !opts.stopped?.()) {
    if (await healthy(config)) {
      const facts = bannerFacts(config);
      if (opts.tty ?? process.stdout.isTTY === true)
        (opts.out ?? process.stdout).write(`${bannerText(facts)}\n`);
      else logger.info(facts, 'appliance ready');
      return true;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}
