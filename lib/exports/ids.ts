/** Timestamps as the output writes them, and ids made from content for formats without ids. */
import { createHash } from "node:crypto";
import { isAcceptedTimestamp } from "../identity/index.js";

/** ISO 8601 UTC with milliseconds, or undefined outside the timestamps convoseg accepts. */
export function isoTimestamp(ms: number): string | undefined {
  return Number.isFinite(ms) && isAcceptedTimestamp(ms) ? new Date(ms).toISOString() : undefined;
}

/**
 * A stable id made from a message's content and its ordinal among exact repeats (0 for the
 * first): the same message gets the same id in every export that holds it, whatever the file or
 * line, so overlapping exports deduplicate. 22 base64url characters (132 bits of SHA-256).
 */
export function contentId(parts: readonly (string | number)[], ordinal: number): string {
  return createHash("sha256")
    .update(JSON.stringify([...parts, ordinal]))
    .digest("base64url")
    .slice(0, 22);
}

/** Counts exact repeats: the ordinal of each content key in the order they are met. */
export class Repeats {
  private readonly seen = new Map<string, number>();

  next(parts: readonly (string | number)[]): number {
    const key = JSON.stringify(parts);
    const ordinal = this.seen.get(key) ?? 0;
    this.seen.set(key, ordinal + 1);
    return ordinal;
  }

  /** Forgets every key: repeats are exact, so a reader in time order clears at each new time. */
  clear(): void {
    this.seen.clear();
  }
}
