import readline from 'node:readline';

/** Lines of standard input when it is not a terminal (a pipe from a secret store, a CI step). */
let piped: Promise<string[]> | undefined;
function pipedLines(): Promise<string[]> {
  piped ??= new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8').split(/\r?\n/)));
    process.stdin.on('error', reject);
  });
  return piped;
}

/**
 * Asks on the terminal (stderr, so stdout stays for results), hiding what is typed when
 * `secret`; on a pipe, takes the next line of standard input instead.
 */
export async function ask(question: string, opts: { secret?: boolean } = {}): Promise<string> {
  if (!process.stdin.isTTY) {
    const lines = await pipedLines();
    return (lines.shift() ?? '').trim();
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (opts.secret) {
    // Echo nothing of what is typed: readline writes keystrokes through _writeToOutput.
    const out = rl as unknown as { _writeToOutput: (s: string) => void };
    out._writeToOutput = (s: string) => {
      if (s.startsWith(question)) process.stderr.write(question);
    };
  }
  try {
    return await new Promise<string>((resolve) => rl.question(question, (answer) => resolve(answer.trim())));
  } finally {
    if (opts.secret) process.stderr.write('\n');
    rl.close();
  }
}
