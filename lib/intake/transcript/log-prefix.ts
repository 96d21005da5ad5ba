/**
 * The volatile prefix of a log line (`docs/specs/transcript.md` §8, the original's
 * `mask_volatile_prefix`): a leading timestamp, then any bracketed hex counters. A timestamp is
 * required; a bracketed pid alone is no prefix. Segmentation only asks whether a line has one, so
 * the masked form (the original's `"\u{0}TS\u{0}"` sentinel) is not built here. Hand-written
 * byte scanning over ASCII; only digit counts are checked, not value ranges.
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const SPACE = 0x20;
const NO_MATCH = -1;

/**
 * The length of the volatile prefix of the line `bytes[start, end)` (its line break already
 * stripped), or 0 when the line does not begin with a timestamp.
 */
export function volatilePrefixLength(bytes: Uint8Array, start: number, end: number): number {
  let at = isoTimestampEnd(bytes, start, end);
  if (at === NO_MATCH) at = syslogTimestampEnd(bytes, start, end);
  if (at === NO_MATCH) return 0;
  for (let counter = counterEnd(bytes, at, end); counter !== NO_MATCH; ) {
    at = counter;
    counter = counterEnd(bytes, at, end);
  }
  return at - start;
}

/**
 * `YYYY-MM-DD`, `T` or one space, `HH:MM:SS`, then an optional fraction (`.` or `,` and one or
 * more digits; a bare `.` is not taken) and an optional offset (`Z`, `+HH:MM` or `-HH:MM`).
 */
function isoTimestampEnd(bytes: Uint8Array, start: number, end: number): number {
  let at = digitsEnd(bytes, start, end, 4);
  at = charEnd(bytes, at, end, "-");
  at = digitsEnd(bytes, at, end, 2);
  at = charEnd(bytes, at, end, "-");
  at = digitsEnd(bytes, at, end, 2);
  const separator = charEnd(bytes, at, end, "T");
  at = separator === NO_MATCH ? charEnd(bytes, at, end, " ") : separator;
  at = clockEnd(bytes, at, end);
  if (at === NO_MATCH) return NO_MATCH;
  return offsetEnd(bytes, fractionEnd(bytes, at, end), end);
}

/** `Mon DD HH:MM:SS`: an English month abbreviation, a two-digit or space-padded day, a time. */
function syslogTimestampEnd(bytes: Uint8Array, start: number, end: number): number {
  const month = MONTHS.find((name) => charsEnd(bytes, start, end, name) !== NO_MATCH);
  if (month === undefined) return NO_MATCH;
  let at = charEnd(bytes, start + month.length, end, " ");
  const twoDigits = digitsEnd(bytes, at, end, 2);
  at = twoDigits === NO_MATCH ? digitsEnd(bytes, charEnd(bytes, at, end, " "), end, 1) : twoDigits;
  return clockEnd(bytes, charEnd(bytes, at, end, " "), end);
}

/** `HH:MM:SS`. */
function clockEnd(bytes: Uint8Array, start: number, end: number): number {
  let at = digitsEnd(bytes, start, end, 2);
  at = charEnd(bytes, at, end, ":");
  at = digitsEnd(bytes, at, end, 2);
  at = charEnd(bytes, at, end, ":");
  return digitsEnd(bytes, at, end, 2);
}

/** An optional `.123` or `,123`; without a digit after the mark nothing is taken. */
function fractionEnd(bytes: Uint8Array, start: number, end: number): number {
  if (
    charEnd(bytes, start, end, ".") === NO_MATCH &&
    charEnd(bytes, start, end, ",") === NO_MATCH
  ) {
    return start;
  }
  let at = start + 1;
  while (at < end && isDigit(bytes[at])) at++;
  return at === start + 1 ? start : at;
}

/** An optional `Z`, `+HH:MM` or `-HH:MM`; an incomplete offset is not taken. */
function offsetEnd(bytes: Uint8Array, start: number, end: number): number {
  const zulu = charEnd(bytes, start, end, "Z");
  if (zulu !== NO_MATCH) return zulu;
  let sign = charEnd(bytes, start, end, "+");
  if (sign === NO_MATCH) sign = charEnd(bytes, start, end, "-");
  let at = digitsEnd(bytes, sign, end, 2);
  at = charEnd(bytes, at, end, ":");
  at = digitsEnd(bytes, at, end, 2);
  return at === NO_MATCH ? start : at;
}

/**
 * A bracketed counter after the timestamp: an optional single space, `[`, one or more ASCII hex
 * digits, `]`. `[ERROR]` and `[shard-3]` are no counters; `[deadbeef]` is (a known bias).
 */
function counterEnd(bytes: Uint8Array, start: number, end: number): number {
  const open = bytes[start] === SPACE && start < end ? start + 1 : start;
  let at = charEnd(bytes, open, end, "[");
  if (at === NO_MATCH) return NO_MATCH;
  const digits = at;
  while (at < end && isHexDigit(bytes[at])) at++;
  if (at === digits) return NO_MATCH;
  return charEnd(bytes, at, end, "]");
}

/** The end of exactly `count` ASCII digits at `start`, or NO_MATCH (also when `start` is). */
function digitsEnd(bytes: Uint8Array, start: number, end: number, count: number): number {
  if (start === NO_MATCH || start + count > end) return NO_MATCH;
  for (let at = start; at < start + count; at++) if (!isDigit(bytes[at])) return NO_MATCH;
  return start + count;
}

/** The end of the one ASCII character `char` at `start`, or NO_MATCH (also when `start` is). */
function charEnd(bytes: Uint8Array, start: number, end: number, char: string): number {
  return start !== NO_MATCH && start < end && bytes[start] === char.charCodeAt(0)
    ? start + 1
    : NO_MATCH;
}

/** The end of the ASCII string `chars` at `start`, or NO_MATCH. */
function charsEnd(bytes: Uint8Array, start: number, end: number, chars: string): number {
  if (start + chars.length > end) return NO_MATCH;
  for (let i = 0; i < chars.length; i++) {
    if (bytes[start + i] !== chars.charCodeAt(i)) return NO_MATCH;
  }
  return start + chars.length;
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

function isHexDigit(byte: number): boolean {
  return isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}
