/**
 * Times without a zone (WhatsApp lines, old Telegram `date` fields) read in an IANA zone. The
 * default is the machine's zone, which the report names so that a wrong guess is visible.
 */
import { ExportTimezoneError } from "./errors.js";

/** The machine's IANA zone (`UTC` when the runtime names none). */
export function machineTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** Converts wall-clock fields in one zone to epoch milliseconds. */
export type WallClock = (
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
) => number;

/**
 * The converter of `zone`. A wall time in a DST gap moves forward by the gap; one that occurs
 * twice (the hour repeated in autumn) takes the earlier instant, as most exporters mean it.
 *
 * @throws ExportTimezoneError when `zone` is no zone this runtime knows.
 */
export function wallClockIn(zone: string): WallClock {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    throw new ExportTimezoneError(zone);
  }
  // Offsets change at most a few times a year: one lookup per hour of the input is plenty.
  const offsets = new Map<number, number>();
  const offsetAt = (ms: number): number => {
    const hour = Math.floor(ms / 3_600_000);
    let offset = offsets.get(hour);
    if (offset === undefined) {
      const f: Record<string, number> = {};
      for (const part of format.formatToParts(hour * 3_600_000)) f[part.type] = Number(part.value);
      offset = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - hour * 3_600_000;
      offsets.set(hour, offset);
    }
    return offset;
  };
  return (year, month, day, hour, minute, second) => {
    const wall = Date.UTC(year, month - 1, day, hour, minute, second);
    // The offsets a day either side: around a change they differ, and give both readings.
    const before = wall - offsetAt(wall - 86_400_000);
    const after = wall - offsetAt(wall + 86_400_000);
    const candidates = [Math.min(before, after), Math.max(before, after)];
    for (const t of candidates) if (t + offsetAt(t) === wall) return t;
    return candidates[1];
  };
}
