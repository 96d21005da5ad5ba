/** A time as `search` and `mcp` take one: a duration back from a clock, or an ISO date or time. */
import { parseTime } from "convoseg/duration";

/**
 * The epoch ms `text` names: `30d` back from `now` (at most a year), or `2018-05-29` (UTC
 * midnight) or a zoned ISO time; else throws naming `flag`.
 */
export function timeOf(flag: string, text: string, now: number): number {
  const time = parseTime(text, now);
  if (time !== undefined) return time.at;
  throw new Error(
    `${flag} must be a duration (30d, 12h) or an ISO date (2018-05-29) (got ${JSON.stringify(text.slice(0, 40))})`,
  );
}
