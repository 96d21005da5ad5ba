/**
 * Durations and times as people write them in flags and settings (`90s`, `2d`, `2026-01-31`).
 * A time is a duration back from a clock or an ISO date or time.
 */
export {
  formatDuration,
  formatElapsed,
  nextUtcMidnight,
  parseDuration,
  parseTime,
  underClock,
} from "./duration.js";
