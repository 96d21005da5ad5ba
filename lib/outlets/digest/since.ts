import { parseDuration } from "../../base/duration/index.js";
import { DigestError } from "./errors.js";

const WEEK_MS = 7 * 86_400_000;
const WEEKS = /^(\d+)w$/;
/** `2026-01-31`, or a full ISO 8601 time with its zone (`2026-01-31T08:00:00Z`). */
const ISO = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The epoch ms `text` names, relative to `now`: a duration back from it (`7d`, `24h`, `2w`,
 * `90m`) or an ISO date (UTC midnight) or time with its zone. A {@link DigestError} naming
 * `flag` (default `--since`) otherwise.
 */
export function parseSince(text: string, now: Date, flag = "--since"): number {
  const trimmed = text.trim();
  if (ISO.test(trimmed)) {
    const ms = Date.parse(trimmed.length === 10 ? `${trimmed}T00:00:00Z` : trimmed);
    if (Number.isFinite(ms)) return ms;
  } else if (/^\d+(?:\.\d+)?(?:s|m|h|d|w)$/.test(trimmed)) {
    // A unit is required: a bare number (milliseconds to parseDuration) is surely a mistake.
    const weeks = WEEKS.exec(trimmed);
    try {
      const back = weeks ? Number(weeks[1]) * WEEK_MS : parseDuration(trimmed, flag);
      if (Number.isSafeInteger(back) && back > 0) return now.getTime() - back;
    } catch {
      // Said below, with the forms a digest takes.
    }
  }
  throw new DigestError(
    "DIGEST_BAD_TIME",
    `${flag} must be a duration back from now (7d, 24h, 2w) or an ISO date (2026-01-31, 2026-01-31T08:00Z) (got ${JSON.stringify(text.slice(0, 40))})`,
  );
}
