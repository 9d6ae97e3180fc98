/**
 * The exit statuses mewcode uses, each with what it means: main.ts is the only place that sets the
 * process's exit status, and `--help` and the README list these descriptions.
 *
 * @module
 */

/** The exit statuses, by name. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  auth: 41,
  maxTurns: 53,
  maxBudget: 54,
  needsApproval: 55,
  unavailable: 75,
  hangup: 129,
  interrupted: 130,
  outputClosed: 141,
  terminated: 143,
} as const;

/** One of the EXIT values. */
export type ExitCode = typeof EXIT[keyof typeof EXIT];

/** What each exit status means, in order. */
export const EXIT_DESCRIPTIONS: readonly (readonly [ExitCode, string])[] = [
  [EXIT.ok, "success"],
  [
    EXIT.error,
    "an error: a tool, the API (other than below), an answer cut off, refused or stopped for an unknown reason, invalid structured output",
  ],
  [EXIT.usage, "a usage error: a bad flag, a missing prompt, an unknown session"],
  [EXIT.auth, "authentication failed: no API key, or the API refused it (401/403)"],
  [EXIT.maxTurns, "--max-turns was reached before the model finished"],
  [EXIT.maxBudget, "--max-budget-usd was reached before the model finished"],
  [EXIT.needsApproval, "at least one action needed an approval that no one could give"],
  [
    EXIT.unavailable,
    "the API stayed unavailable after retries (overloaded, rate limited, network): retry later",
  ],
  [EXIT.hangup, "hung up (SIGHUP: the terminal closed)"],
  [EXIT.interrupted, "interrupted (SIGINT, Ctrl-C)"],
  [
    EXIT.outputClosed,
    "standard output was closed before all was written (its reader, such as head, stopped): the run was stopped",
  ],
  [EXIT.terminated, "terminated (SIGTERM)"],
];

/** The signals that end a run the orderly way (its tools stopped, its result printed, its files removed). */
export type InterruptSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

/** The exit status of a run a signal ended: 128 plus the signal's number, as a shell reports it. */
export function interruptStatus(signal: InterruptSignal | null): ExitCode {
  if (signal === "SIGTERM") return EXIT.terminated;
  if (signal === "SIGHUP") return EXIT.hangup;
  return EXIT.interrupted;
}
