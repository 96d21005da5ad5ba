import type { SegmentationOutcome, TranscriptSegment } from "convoseg/transcript";
import { expect } from "vitest";

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
export const byteLength = (text: string): number => utf8(text).length;

/** The segments' ranges follow each other from byte 0 to the text's last byte, in order. */
export function expectPartition(outcome: SegmentationOutcome, text: string): void {
  let cursor = 0;
  for (const segment of outcome.segments) {
    expect(segment.byteStart).toBe(cursor);
    expect(segment.byteEnd).toBeGreaterThan(segment.byteStart);
    cursor = segment.byteEnd;
  }
  expect(cursor).toBe(byteLength(text));
}

/** The segments of one kind. */
export const ofKind = (outcome: SegmentationOutcome, kind: TranscriptSegment["kind"]) =>
  outcome.segments.filter((s) => s.kind === kind);

/** The exact text of a segment's byte range. */
export function rangeText(text: string, segment: TranscriptSegment): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(
    utf8(text).subarray(segment.byteStart, segment.byteEnd),
  );
}

/** The error `run` throws (failing the test when it throws none). */
export function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error("expected an error, but none was thrown");
}

/** `count` lines `2026-07-18T10:00:00Z tick i`. */
export const timestampedLines = (count: number, from = 0): string =>
  Array.from({ length: count }, (_, i) => `2026-07-18T10:00:00Z tick ${from + i}\n`).join("");

export const jsonLine = (value: unknown): string => `${JSON.stringify(value)}\n`;
