import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './errors.js';

/** What `vtl login` stores: where the appliance is, how to trust it, and the credential. */
export interface CliConfig {
  server: string;
  /** A session token or an API key; sent as `Authorization: Bearer`. Never printed. */
  token: string;
  /** `session` (from a user's login, expires) or `apikey`. */
  credential: 'session' | 'apikey';
  /** Who the credential is, from GET /api/auth/whoami. */
  name: string;
  role: string;
  expiresAt?: string;
  /** Skip TLS verification (the appliance's self-signed certificate). */
  insecure?: boolean;
  /** A CA bundle that signs the appliance's certificate. */
  caFile?: string;
}

/** `$VTL_CONFIG`, else `~/.config/vtl/config.json` (XDG_CONFIG_HOME honoured). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.VTL_CONFIG) return path.resolve(env.VTL_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'vtl', 'config.json');
}

/** The stored configuration, or undefined before the first login. */
export async function readConfig(file = configPath()): Promise<CliConfig | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}`, 'Check its permissions.');
  }
  try {
    const parsed = JSON.parse(text) as CliConfig;
    if (typeof parsed.server !== 'string' || typeof parsed.token !== 'string')
      throw new Error('no server or token');
    return parsed;
  } catch {
    throw new CliError(`${file} is not a vtl configuration.`, 'Delete it and run `vtl login` again.');
  }
}

/** The stored configuration; fails with what to do when nobody logged in yet. */
export async function requireConfig(file = configPath()): Promise<CliConfig> {
  const config = await readConfig(file);
  if (!config) throw new CliError('Not logged in.', 'Run `vtl login --server https://HOST:PORT` first.');
  return config;
}

/**
 * Writes the configuration readable by its owner only: the directory 0700, the file 0600
 * (chmod too, in case it existed with looser bits), through a rename so a crash leaves the old one.
 */
export async function writeConfig(config: CliConfig, file = configPath()): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  await fs.chmod(tmp, 0o600);
  await fs.rename(tmp, file);
}
