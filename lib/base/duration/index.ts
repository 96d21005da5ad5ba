/** Durations as people write them in flags and configuration (`90s`, `15m`, `24h`, `2d`). */
export { formatDuration, nextUtcMidnight, parseDuration } from "./duration.js";
