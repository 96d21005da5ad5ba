/**
 * The `EraseUser` operation as the stack's function runs it: an operator's event checked field
 * by field, one run of `eraseUser` that stops starting pages when the invocation nears its
 * deadline, and an answer that says whether to invoke it again (`done: false`: same event).
 */
import type { ErasureCounts } from "./audit.js";
import type { ErasureDependencies } from "./dependencies.js";
import { type EraseRequest, eraseUser } from "./erase.js";
import { ErasureRequestError } from "./errors.js";

/** What the function answers: counts and where the audit stands, never a message's text. */
export interface EraseUserResponse {
  /** False: it stopped near its deadline; invoke it again with the same event to go on. */
  done: boolean;
  dryRun: boolean;
  counts: ErasureCounts;
  byChannel?: Record<string, number>;
  audit?: { authorKey: string; requestedAt: string; state: string; runs: number };
}

/** Room left for the page in flight when the function stops starting pages (15-minute runs). */
const DEADLINE_MARGIN_MS = 120_000;

/** Checks an invocation's event: `{userId?, user?, channels?, allChannels?, requestedBy, dryRun?}`. */
export function eraseRequestOf(event: unknown): EraseRequest {
  if (typeof event !== "object" || event === null) {
    throw new ErasureRequestError(
      "event",
      "expected {userId?, user?, channels?, allChannels?, requestedBy, dryRun?}",
    );
  }
  const { user, userId, channels, allChannels, requestedBy, dryRun } = event as Record<
    string,
    unknown
  >;
  if (user !== undefined && typeof user !== "string") {
    throw new ErasureRequestError("user", "expected a string");
  }
  if (userId !== undefined && typeof userId !== "string") {
    throw new ErasureRequestError("userId", "expected a string");
  }
  if (user === undefined && userId === undefined) {
    throw new ErasureRequestError("user", "give userId, user (the stored name), or both");
  }
  if (typeof requestedBy !== "string") {
    throw new ErasureRequestError("requestedBy", "expected a string: who asked");
  }
  if (
    channels !== undefined &&
    (!Array.isArray(channels) || !channels.every((c) => typeof c === "string"))
  ) {
    throw new ErasureRequestError("channels", "expected an array of channel ids");
  }
  if (dryRun !== undefined && typeof dryRun !== "boolean") {
    throw new ErasureRequestError("dryRun", "expected true or false");
  }
  if (allChannels !== undefined && typeof allChannels !== "boolean") {
    throw new ErasureRequestError("allChannels", "expected true or false");
  }
  return {
    ...(userId === undefined ? {} : { userId }),
    ...(user === undefined ? {} : { user }),
    requestedBy,
    ...(channels === undefined ? {} : { channels: channels as string[] }),
    ...(allChannels === undefined ? {} : { allChannels }),
    ...(dryRun === undefined ? {} : { dryRun }),
  };
}

/** One invocation: erases until done, or until fewer than the margin's milliseconds are left. */
export async function runEraseUser(
  deps: ErasureDependencies,
  event: unknown,
  remainingMs: () => number,
): Promise<EraseUserResponse> {
  const outcome = await eraseUser(
    { ...deps, shouldStop: () => remainingMs() < DEADLINE_MARGIN_MS },
    eraseRequestOf(event),
  );
  const response: EraseUserResponse = {
    done: outcome.done,
    dryRun: outcome.dryRun,
    counts: outcome.counts,
  };
  if (outcome.byChannel !== undefined) response.byChannel = outcome.byChannel;
  if (outcome.audit !== undefined) {
    const { authorKey, requestedAt, state, runs } = outcome.audit;
    response.audit = { authorKey, requestedAt, state, runs };
  }
  return response;
}
