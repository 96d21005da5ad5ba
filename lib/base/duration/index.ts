/** Durations as people write them in flags and configuration (`90s`, `15m`, `24h`, `2d`). */
export { formatDuration, parseDuration } from "./duration.js";
