/**
 * Discord snowflakes: 64-bit ids as decimal strings whose top 42 bits are milliseconds since the
 * Discord epoch (developers/reference "Snowflakes"). Compared as bigints: they exceed a double.
 */
import { DiscordConfigError } from "./errors.js";

export const DISCORD_EPOCH_MS = 1_420_070_400_000;
const SNOWFLAKE = /^\d{1,20}$/;

export function isSnowflake(value: unknown): value is string {
  return typeof value === "string" && SNOWFLAKE.test(value);
}

/** The lowest snowflake of a millisecond: `after=` it reads from that time on (backfill). */
export function snowflakeFromTime(ms: number): string {
  if (!Number.isFinite(ms) || ms < DISCORD_EPOCH_MS) {
    throw new DiscordConfigError("backfillFrom", `must be on or after 2015-01-01 (got ${ms})`);
  }
  return ((BigInt(Math.floor(ms)) - BigInt(DISCORD_EPOCH_MS)) << 22n).toString();
}

/** The millisecond a snowflake was made. */
export function timeOfSnowflake(id: string): number {
  return Number(BigInt(id) >> 22n) + DISCORD_EPOCH_MS;
}

export function compareSnowflakes(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
