/** The exit statuses mewcode uses; main.ts is the only place that sets the process's exit status. */
export const EXIT = { ok: 0, error: 1, usage: 2, maxTurns: 53, interrupted: 130 } as const;

/** One of the EXIT values. */
export type ExitCode = typeof EXIT[keyof typeof EXIT];
