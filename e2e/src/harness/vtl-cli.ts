import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const MAIN = path.join(root, 'cli/dist/main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `vtl` (cli/dist/main.js) as a user would, with its config file at `configFile`
 * and `input` piped on standard input (passwords, API keys).
 */
export function vtl(configFile: string, args: string[], input = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: root,
      env: { ...process.env, VTL_CONFIG: configFile },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A `vtl` that keeps running (--follow, --watch): what it printed so far, and a stop. */
export interface CliStream {
  stdout: () => string;
  stderr: () => string;
  /** Interrupts it (SIGINT, as Ctrl-C) and resolves with its exit status. */
  stop: () => Promise<number | null>;
}

export function vtlStream(configFile: string, args: string[]): CliStream {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: root,
    env: { ...process.env, VTL_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGINT');
      return closed;
    },
  };
}

/** The path of the built `vtl` entry point (for a shell that runs it, e.g. completion). */
export const VTL_MAIN = MAIN;
