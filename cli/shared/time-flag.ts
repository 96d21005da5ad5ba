/** A time as `search` and `mcp` take one: a duration back from a clock, or an ISO date or time. */
import { parseDuration } from "convoseg/duration";

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))?$/;

/** The epoch ms `text` names: `30d` back from `now`, or `2018-05-29` (UTC midnight); else throws naming `flag`. */
export function timeOf(flag: string, text: string, now: number): number {
  const trimmed = text.trim();
  if (ISO_DATE.test(trimmed)) {
    const ms = Date.parse(trimmed.length === 10 ? `${trimmed}T00:00:00Z` : trimmed);
    if (Number.isFinite(ms)) return ms;
  } else {
    try {
      return now - parseDuration(trimmed, flag);
    } catch {
      // Said below, with both forms.
    }
  }
  throw new Error(
    `${flag} must be a duration (30d, 12h) or an ISO date (2018-05-29) (got ${JSON.stringify(text.slice(0, 40))})`,
  );
}
