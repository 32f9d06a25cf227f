import fs from 'node:fs';
import { configPath, readConfig, writeConfig, type CliConfig } from './config.js';
import { CliError, UsageError } from './errors.js';
import { parseCommand } from './args.js';
import { EXIT } from './exit.js';
import { request, type Connection } from './http.js';
import { ask } from './prompt.js';

export const LOGIN_USAGE = 'vtl login [--server URL] [--insecure | --ca FILE] [--username NAME | --api-key]';
export const LOGIN_HELP = `Logs in with a user's password or an API key, typed at a hidden prompt or piped on standard
input (never on the command line), and saves the server, how to trust it and the credential in
$VTL_CONFIG or ~/.config/vtl/config.json (mode 0600).

Options:
  -s, --server URL       The appliance, https://HOST:PORT (default: the last one).
  -k, --insecure         Skip certificate verification (the appliance's self-signed one).
  --ca FILE              Trust the CA in this PEM file.
  -u, --username NAME    Log in as this user (asked for when not given).
  --api-key              Log in with an API key instead.
`;

/**
 * `vtl login`: a user's password (POST /api/auth/login → session token) or an API key, checked
 * with GET /api/auth/whoami and stored in the config file. Secrets come from a hidden prompt or
 * standard input, never from the command line, and are never printed.
 */
export async function login(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    {
      server: { type: 'string', short: 's' },
      insecure: { type: 'boolean', short: 'k' },
      ca: { type: 'string' },
      username: { type: 'string', short: 'u' },
      'api-key': { type: 'boolean' },
    },
    LOGIN_USAGE,
    'login',
  );
  if (positionals.length > 0) throw new UsageError(`Unexpected argument ${positionals[0]}.`, LOGIN_USAGE);
  if (values.insecure && values.ca)
    throw new UsageError('Use either --insecure or --ca, not both.', LOGIN_USAGE);
  if (values['api-key'] && values.username)
    throw new UsageError('Use either --username or --api-key, not both.', LOGIN_USAGE);
  const previous = await readConfig();
  const server = values.server ?? previous?.server;
  if (!server) throw new UsageError('No server yet: pass --server https://HOST:PORT.', LOGIN_USAGE);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server ${server} is not a URL.`, LOGIN_USAGE);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`--server must be an https:// URL, not ${url.protocol}`, LOGIN_USAGE);
  const sameServer = previous?.server === url.origin;
  const caFile = values.ca ?? (values.insecure || !sameServer ? undefined : previous?.caFile);
  if (caFile && !fs.existsSync(caFile))
    throw new CliError(
      `CA file ${caFile} does not exist.`,
      'Pass the path of a PEM file.',
      undefined,
      undefined,
      EXIT.usage,
    );
  const conn: Connection = {
    server: url.origin,
    insecure: values.insecure ?? (values.ca || !sameServer ? false : previous?.insecure),
    caFile,
  };

  let token: string;
  let credential: CliConfig['credential'];
  let expiresAt: string | undefined;
  if (values['api-key']) {
    token = await ask('API key: ', { secret: true });
    if (!token)
      throw new CliError(
        'No API key given.',
        'Type it at the prompt or pipe it on standard input.',
        undefined,
        undefined,
        EXIT.usage,
      );
    credential = 'apikey';
  } else {
    const username = values.username ?? (await ask('Username: '));
    if (!username)
      throw new CliError('No user name given.', 'Pass --username NAME.', undefined, undefined, EXIT.usage);
    const password = await ask('Password: ', { secret: true });
    if (!password)
      throw new CliError(
        'No password given.',
        'Type it at the prompt or pipe it on standard input.',
        undefined,
        undefined,
        EXIT.usage,
      );
    const res = await request(conn, 'POST', '/api/auth/login', { username, password });
    token = res.body.token;
    expiresAt = res.body.expires_at;
    if (res.body.must_change_password)
      out.write(
        `${username} still has the initial password: change it (the console asks at login, or PUT /api/users/${username}/password).\n`,
      );
    credential = 'session';
  }
  const who = (await request({ ...conn, token }, 'GET', '/api/auth/whoami')).body;
  await writeConfig({
    server: conn.server,
    token,
    credential,
    name: who.name,
    role: who.role,
    ...(expiresAt ? { expiresAt } : {}),
    ...(conn.insecure ? { insecure: true } : {}),
    ...(conn.caFile ? { caFile: conn.caFile } : {}),
  });
  const what = credential === 'apikey' ? `API key ${who.name}` : who.name;
  const until = expiresAt ? `; the session expires at ${expiresAt}` : '';
  out.write(`Logged in to ${conn.server} as ${what} (role ${who.role})${until}.\n`);
  out.write(`Credentials saved in ${configPath()}.\n`);
  return EXIT.ok;
}
