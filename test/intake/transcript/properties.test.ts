/**
 * Properties of segmentTranscript on generated transcripts: the ranges partition the text's UTF-8
 * bytes (contiguous, in order, from 0 to the byte length, none empty), the output is the same on
 * a second run, no segment's content is over the fragment cap, a plain segment's content is the
 * exact text of its range, and JSONL contents are the messages' decoded contents in order.
 */

import {
  MAX_FRAGMENT_BYTES,
  SegmentationError,
  type SegmentationOutcome,
  type SegmentationPolicy,
  segmentTranscript,
} from "convoseg/transcript";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const utf8 = (text: string) => Buffer.from(text, "utf8");

/** Lines that exercise every stage: markers, fences, log lines, blanks, CRLF, multibyte text. */
const plainLine = fc.oneof(
  fc.constantFrom(
    "User: hi\n",
    "Assistant: ok\r\n",
    "System: be terse\n",
    "### User\n",
    "Human: h\n",
    "```\n",
    "  ```ts\n",
    "2026-07-18T10:00:00Z tick\n",
    "Jul  8 10:23:45 cron\n",
    "repeat\n",
    "repeat\r\n",
    "\n",
    "\r\n",
    "\n\n\n",
    "\ufeffbom\n",
    "é😀 multibyte\n",
    "no newline",
  ),
  fc.string({ unit: "binary", maxLength: 12 }),
);

/** A message in one of the accepted shapes, with the content it should decode to. */
const message = fc
  .tuple(
    fc.constantFrom("system", "user", "assistant", "tool", "SYSTEM"),
    fc.string({ unit: "binary", maxLength: 16 }),
    fc.constantFrom("flat", "parts", "wrapped"),
  )
  .map(([role, content, shape]) => {
    if (shape === "flat") return { line: JSON.stringify({ role, content }), role, content };
    const parts = [
      { type: "text", text: content },
      { type: "tool_use", name: "Bash", input: {} },
    ];
    const decoded = `${content}\n\n[tool_use: Bash] {}`;
    const body = { role, content: parts };
    const line = JSON.stringify(
      shape === "parts" ? body : { type: role, message: body, uuid: "u" },
    );
    return { line, role, content: decoded };
  });

const jsonlTranscript = fc
  .array(
    fc.oneof(
      message,
      fc.constantFrom(
        { line: "", role: undefined, content: undefined },
        { line: '{"type":"summary","summary":"s"}', role: undefined, content: undefined },
        {
          line: '{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"}',
          role: undefined,
          content: undefined,
        },
      ),
    ),
    { maxLength: 20 },
  )
  .chain((lines) =>
    fc.constantFrom("\n", "\r\n").map((ending) => ({
      text: lines.map((l) => l.line + ending).join(""),
      messages: lines.flatMap((l) => (l.role === undefined ? [] : [[l.role, l.content]])),
    })),
  );

const policy: fc.Arbitrary<Partial<SegmentationPolicy>> = fc.record(
  {
    format: fc.constantFrom("auto", "plain", "jsonl"),
    minSegmentBytes: fc.integer({ min: 0, max: 64 }),
    cacheSystemTurn: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** The outcome, or undefined when forced JSONL rejects the text (the only failure allowed). */
function segmentOrFormatError(
  text: string,
  chosen: Partial<SegmentationPolicy>,
): SegmentationOutcome | undefined {
  try {
    return segmentTranscript(text, chosen);
  } catch (error) {
    expect(error).toBeInstanceOf(SegmentationError);
    expect(chosen.format).toBe("jsonl");
    return undefined;
  }
}

function expectInvariants(
  text: string,
  chosen: Partial<SegmentationPolicy>,
): SegmentationOutcome | undefined {
  const outcome = segmentOrFormatError(text, chosen);
  if (outcome === undefined) return undefined;
  const bytes = utf8(text);
  let cursor = 0;
  let turn = 0;
  for (const segment of outcome.segments) {
    expect(segment.byteStart).toBe(cursor);
    expect(segment.byteEnd).toBeGreaterThan(segment.byteStart);
    cursor = segment.byteEnd;
    expect(segment.turn).toBeGreaterThanOrEqual(turn);
    turn = segment.turn;
    expect(utf8(segment.content).length).toBeLessThanOrEqual(MAX_FRAGMENT_BYTES);
    const cached =
      (chosen.cacheSystemTurn ?? true) &&
      segment.turn === 0 &&
      segment.role?.toLowerCase() === "system";
    expect(segment.metadata).toEqual({
      role: segment.role,
      turn: segment.turn,
      ...(cached ? { cache: true } : {}),
    });
    if (outcome.formatDetected === "plain") {
      const slice = bytes.subarray(segment.byteStart, segment.byteEnd);
      expect(utf8(segment.content).equals(slice)).toBe(true);
    }
  }
  expect(cursor).toBe(bytes.length);
  expect(segmentTranscript(text, chosen)).toEqual(outcome);
  return outcome;
}

describe("segmentTranscript properties", () => {
  it("partitions, repeats itself and keeps exact slices on plain transcripts", () => {
    fc.assert(
      fc.property(fc.array(plainLine, { maxLength: 60 }), policy, (lines, chosen) => {
        expectInvariants(lines.join(""), chosen);
      }),
      { numRuns: 400 },
    );
  });

  it("reads JSONL transcripts as their messages, in order", () => {
    fc.assert(
      fc.property(jsonlTranscript, policy, ({ text, messages }, chosen) => {
        const outcome = expectInvariants(text, chosen);
        if (outcome?.formatDetected !== "jsonl") return;
        expect(outcome.segments.map((s) => [s.role, s.content])).toEqual(messages);
        expect(outcome.segments.map((s) => s.turn)).toEqual(messages.map((_, i) => i));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps every segment within the fragment cap around it", () => {
    const near = fc.integer({ min: MAX_FRAGMENT_BYTES - 40, max: MAX_FRAGMENT_BYTES + 40 });
    const block = fc.oneof(
      near.map((n) => `${"a".repeat(n)}\n\n`),
      near.map((n) => "é".repeat(Math.floor(n / 2))),
      near.map((n) => "2026-07-18T10:00:00Z log line\n".repeat(Math.ceil(n / 30))),
      // On a line of its own: glued to a block without a final newline, the opening fence would
      // be text and the closing one would open a fence running to the end, over the cap.
      near.map((n) => `\n\`\`\`\n${"c".repeat(Math.min(n, MAX_FRAGMENT_BYTES - 9))}\n\`\`\`\n`),
      fc.constantFrom("User: next\n", "tiny\n", "\n"),
    );
    const big = fc.oneof(
      fc.array(block, { minLength: 1, maxLength: 4 }).map((blocks) => blocks.join("")),
      near.map(
        (n) =>
          `${JSON.stringify({ role: "user", content: `${"j".repeat(n)}\n\n${"k".repeat(n)}` })}\n`,
      ),
    );
    fc.assert(
      fc.property(big, fc.integer({ min: 0, max: 4096 }), (text, minSegmentBytes) => {
        expectInvariants(text, { minSegmentBytes });
      }),
      { numRuns: 12 },
    );
  });
});
