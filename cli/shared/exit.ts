/** The exit codes: done; failed (bad input, a failed write, work not done); a usage error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
