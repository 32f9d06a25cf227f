/**
 * The exit codes of every `vtl` command (cli/README.md): the same failure exits the same way
 * whichever command met it.
 */
export const EXIT = {
  /** Done; for `vtl diff`, nothing would change. */
  ok: 0,
  /** `vtl diff` only: applying would change something. */
  changes: 1,
  /** The command line is wrong: unknown command or option, missing or extra argument, no such file. */
  usage: 2,
  /** The manifests are invalid, or the appliance would refuse a change they declare. */
  invalid: 3,
  /** The appliance refused the request or has no such object (4xx other than 401). */
  refused: 4,
  /** Not logged in, the credential not accepted (401), the appliance unreachable, untrusted or failing (5xx). */
  unavailable: 5,
  /** A failure of vtl itself: please report it. */
  internal: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
