/** The boundaries `docs/specs/transcript.md` pins, section by section, and the port's decisions. */

import {
  ContextOverLimitError,
  DEFAULT_SEGMENTATION_POLICY,
  MAX_FRAGMENT_BYTES,
  MAX_FRAGMENTS,
  MAX_TRANSCRIPT_BYTES,
  SegmentationError,
  segmentTranscript,
  TranscriptError,
} from "convoseg/transcript";
import { describe, expect, it } from "vitest";
import { partitionByWeight } from "../../../lib/intake/transcript/normalize.js";
import { byteLength, expectPartition, ofKind, rangeText, thrown } from "./support.js";

const kinds = (text: string, minSegmentBytes = 0) =>
  segmentTranscript(text, { minSegmentBytes }).segments.map((s) => [s.kind, s.content]);
const roles = (text: string) => segmentTranscript(text).segments.map((s) => [s.turn, s.role]);
const fences = (count: number, body: string) => "```\n".concat(body, "\n```\n").repeat(count);

describe("constants, policy and errors", () => {
  it("has the spec's caps and defaults", () => {
    expect([MAX_TRANSCRIPT_BYTES, MAX_FRAGMENT_BYTES, MAX_FRAGMENTS]).toEqual([
      8_388_608, 1_048_576, 1_024,
    ]);
    expect(DEFAULT_SEGMENTATION_POLICY).toEqual({
      format: "auto",
      minSegmentBytes: 256,
      cacheSystemTurn: true,
    });
    expect(Object.isFrozen(DEFAULT_SEGMENTATION_POLICY)).toBe(true);
  });

  it("fills missing and undefined policy fields from the defaults", () => {
    const text = "User: a\n```\nx\n```\n```\ny\n```\n";
    expect(segmentTranscript(text, { minSegmentBytes: undefined })).toEqual(
      segmentTranscript(text),
    );
    expect(segmentTranscript(text, {})).toEqual(segmentTranscript(text, { minSegmentBytes: 256 }));
  });

  it.each([
    [{ format: "JSONL" }, 'format must be "auto", "plain" or "jsonl" (got "JSONL")'],
    [{ minSegmentBytes: -1 }, "minSegmentBytes must be a non-negative integer (got -1)"],
    [{ minSegmentBytes: 1.5 }, "minSegmentBytes must be a non-negative integer (got 1.5)"],
    [{ cacheSystemTurn: "yes" }, 'cacheSystemTurn must be a boolean (got "yes")'],
  ])("rejects the policy %j with a RangeError", (policy, message) => {
    expect(() => segmentTranscript("x", policy as never)).toThrow(new RangeError(message));
  });

  it("gives each error class a literal name, a stable code and Error as an ancestor", () => {
    const over = thrown(() => segmentTranscript("a".repeat(MAX_TRANSCRIPT_BYTES + 1)));
    const format = thrown(() => segmentTranscript("x", { format: "jsonl" }));
    expect(over).toBeInstanceOf(TranscriptError);
    expect(over).toBeInstanceOf(Error);
    expect([over.name, (over as ContextOverLimitError).code]).toEqual([
      "ContextOverLimitError",
      "TRANSCRIPT_CONTEXT_OVER_LIMIT",
    ]);
    expect(format).toBeInstanceOf(TranscriptError);
    expect([format.name, (format as SegmentationError).code]).toEqual([
      "SegmentationError",
      "TRANSCRIPT_SEGMENTATION_FAILED",
    ]);
  });
});

describe("caps (§2, §3)", () => {
  it("accepts exactly 8 MiB, counting bytes, not characters", () => {
    const outcome = segmentTranscript("a".repeat(MAX_TRANSCRIPT_BYTES));
    expect(outcome.segments).toHaveLength(8);
    const multibyte = "é".repeat(MAX_TRANSCRIPT_BYTES / 2 + 1);
    expect(() => segmentTranscript(multibyte)).toThrow(
      new ContextOverLimitError(
        "transcript of 8388610 bytes exceeds the cap of 8388608 bytes",
        "MAX_TRANSCRIPT_BYTES",
        MAX_TRANSCRIPT_BYTES,
        8388610,
      ),
    );
  });

  it("checks the size cap before the format, even under forced JSONL", () => {
    const error = thrown(() =>
      segmentTranscript("a".repeat(MAX_TRANSCRIPT_BYTES + 1), { format: "jsonl" }),
    );
    expect(error).toBeInstanceOf(ContextOverLimitError);
  });

  it("accepts exactly 1024 fragments and rejects 1025", () => {
    const turns = (n: number) => Array.from({ length: n }, (_, i) => `User: ${i}\n`).join("");
    expect(segmentTranscript(turns(MAX_FRAGMENTS), { minSegmentBytes: 0 }).segments).toHaveLength(
      MAX_FRAGMENTS,
    );
    expect(() => segmentTranscript(turns(MAX_FRAGMENTS + 1), { minSegmentBytes: 0 })).toThrow(
      ContextOverLimitError,
    );
  });

  it("advises raising minSegmentBytes only when that can get under the cap (9c's gap)", () => {
    const manyFences = `User: code\n${fences(1100, "x".repeat(301))}`;
    expect(() => segmentTranscript(manyFences)).toThrow(
      "transcript segmented into 1101 fragments, exceeding the cap of 1024 — raise minSegmentBytes to merge more small segments",
    );
    expect(segmentTranscript(manyFences, { minSegmentBytes: 400 }).segments).toHaveLength(2);

    const manyTurns = Array.from({ length: 1025 }, (_, i) => `User: ${i}\n`).join("");
    expect(() => segmentTranscript(manyTurns, { minSegmentBytes: 1_000_000 })).toThrow(
      "transcript segmented into 1025 fragments, exceeding the cap of 1024 — even the largest minSegmentBytes leaves 1025, since segments never merge across turns, kinds or JSONL lines: split the transcript",
    );
  });

  it("rejects an oversized fence in JSONL content, left oversized by the original (9a's gap)", () => {
    const fence = `\`\`\`\n${"a".repeat(MAX_FRAGMENT_BYTES)}\n\`\`\`\n`;
    const text = `${JSON.stringify({ role: "user", content: `intro\n\n${fence}after` })}\n`;
    expect(() => segmentTranscript(text)).toThrow(
      new ContextOverLimitError(
        `an unsplittable fenced code block of ${fence.length} bytes exceeds the cap of 1048576 bytes`,
        "MAX_FRAGMENT_BYTES",
        MAX_FRAGMENT_BYTES,
        fence.length,
      ),
    );
  });

  it("keeps a fence of exactly 1 MiB", () => {
    const fence = `\`\`\`\n${"a".repeat(MAX_FRAGMENT_BYTES - 9)}\n\`\`\`\n`;
    expect(byteLength(fence)).toBe(MAX_FRAGMENT_BYTES);
    expect(ofKind(segmentTranscript(fence), "code")).toHaveLength(1);
  });
});

describe("lone surrogates", () => {
  it.each([
    ["a\ud800b", 1, "D800"],
    ["ok 😀 then \udfff", 11, "DFFF"],
    ["\ud83d", 0, "D83D"],
  ])("rejects %j naming the UTF-16 offset %i", (text, offset, unit) => {
    const error = thrown(() => segmentTranscript(text, { format: "plain" }));
    expect(error).toBeInstanceOf(SegmentationError);
    expect(error.message).toBe(
      `lone surrogate U+${unit} at UTF-16 offset ${offset}: the transcript is not well-formed Unicode`,
    );
    expect(error).toMatchObject({ offset });
  });
});

describe("empty input and format detection (§3, §4)", () => {
  it("gives no segments for an empty text, plain in auto and plain", () => {
    for (const format of ["auto", "plain"] as const) {
      expect(segmentTranscript("", { format })).toEqual({
        formatDetected: "plain",
        segments: [],
        mergedSegments: 0,
      });
    }
    expect(() => segmentTranscript("", { format: "jsonl" })).toThrow(
      new SegmentationError("no non-blank jsonl line found"),
    );
  });

  it("segments valid JSONL as one roleless plain turn when plain is forced", () => {
    const text = '{"role":"user","content":"hi"}\n';
    expect(segmentTranscript(text, { format: "plain" }).segments).toEqual([
      expect.objectContaining({ role: null, turn: 0, content: text }),
    ]);
  });

  it("falls back to plain in auto on any JSONL failure", () => {
    const text = '{"role":"user","content":"hi"}\n   \n';
    expect(segmentTranscript(text).formatDetected).toBe("plain");
    expect(segmentTranscript("User: hi\n").formatDetected).toBe("plain");
  });
});

describe("plain turns (§6)", () => {
  it("matches markers case-sensitively, at the very start, with nothing required after", () => {
    expect(
      roles("User:nospace\nuser: no\nUSER: no\n  User: no\nUser:\n### Users\n###User no\n"),
    ).toEqual([
      [0, "User"],
      [1, "User"],
      [2, "User"],
    ]);
    expect(roles("### Assistant's reply\nHuman: h\nAI: a\nTool: t\n### User x\n")).toEqual([
      [0, "Assistant"],
      [1, "Human"],
      [2, "AI"],
      [3, "Tool"],
      [4, "User"],
    ]);
  });

  it("makes text before the first marker its own roleless turn, with no cache for a later system turn", () => {
    const outcome = segmentTranscript("intro\nSystem: be terse\n");
    expect(outcome.segments.map((s) => s.metadata)).toEqual([
      { role: null, turn: 0 },
      { role: "System", turn: 1 },
    ]);
  });

  it("keeps the marker and CRLF bytes in the content", () => {
    const text = "User: hi\r\nAssistant: hello\r\n";
    expect(segmentTranscript(text).segments.map((s) => s.content)).toEqual([
      "User: hi\r\n",
      "Assistant: hello\r\n",
    ]);
  });

  it("splits turns before fences, so a marker inside a fence opens a turn (§6 example)", () => {
    const text = "User: look\n```\nAssistant: inside code\n```\nafter\n";
    const outcome = segmentTranscript(text, { minSegmentBytes: 0 });
    expect(outcome.segments.map((s) => [s.turn, s.role, s.kind, s.content])).toEqual([
      [0, "User", "body", "User: look\n"],
      [0, "User", "code", "```\n"],
      [1, "Assistant", "body", "Assistant: inside code\n"],
      [1, "Assistant", "code", "```\nafter\n"],
    ]);
  });

  it("marks turn 0 as cached for System in any case, and not when the policy says no", () => {
    expect(segmentTranscript("SYSTEM: x\n").segments[0].metadata.cache).toBeUndefined();
    const text = '{"role":"SYSTEM","content":"x"}\n{"role":"user","content":"y"}\n';
    expect(segmentTranscript(text).segments.map((s) => s.metadata.cache)).toEqual([
      true,
      undefined,
    ]);
    const off = segmentTranscript("System: x\n", { cacheSystemTurn: false });
    expect(off.segments[0].metadata).toEqual({ role: "System", turn: 0 });
  });

  it("marks every segment of a system turn 0", () => {
    const text = `System: rules\n${"2026-07-18T10:00:00Z x\n".repeat(8)}\`\`\`\ncode\n\`\`\`\n`;
    const outcome = segmentTranscript(text, { minSegmentBytes: 0 });
    expect(outcome.segments.map((s) => [s.kind, s.metadata.cache])).toEqual([
      ["body", true],
      ["log", true],
      ["code", true],
    ]);
  });
});

describe("fences (§7a)", () => {
  it("allows leading whitespace and an info string; a fence line with one may close", () => {
    expect(kinds("  ```ts\nx\n```rust\nafter\n")).toEqual([
      ["code", "  ```ts\nx\n```rust\n"],
      ["body", "after\n"],
    ]);
    expect(kinds("\u00a0\u3000```\nx\n```")).toEqual([["code", "\u00a0\u3000```\nx\n```"]]);
  });

  it("counts only three backticks; ~~~ is no fence and four count as three", () => {
    expect(kinds("~~~\nx\n~~~\n")).toEqual([["body", "~~~\nx\n~~~\n"]]);
    expect(kinds("````\nx\n```\ny\n")).toEqual([
      ["code", "````\nx\n```\n"],
      ["body", "y\n"],
    ]);
    expect(kinds("a ``` b\n``\n")).toEqual([["body", "a ``` b\n``\n"]]);
  });

  it("runs an unterminated fence to the end of the turn", () => {
    expect(
      segmentTranscript("User: a\n```\nx\nAssistant: b\n").segments.map((s) => s.kind),
    ).toEqual(["body", "code", "body"]);
  });
});

describe("log runs (§7b, §8)", () => {
  it("needs 8 consecutive candidates; 7 stay in the body", () => {
    expect(kinds("a\n".repeat(7))).toEqual([["body", "a\n".repeat(7)]]);
    expect(kinds(`x\n${"a\n".repeat(8)}y\n`)).toEqual([
      ["body", "x\n"],
      ["log", "a\n".repeat(8)],
      ["body", "y\n"],
    ]);
  });

  it("counts repeats anywhere in the span: an alternating block qualifies, and repeats need not be adjacent", () => {
    expect(kinds("A\nB\n".repeat(4))).toEqual([["log", "A\nB\n".repeat(4)]]);
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i}\n`).join("");
    expect(kinds(`${lines}gap\n\n${lines}`)).toEqual([
      ["log", lines],
      ["body", "gap\n\n"],
      ["log", lines],
    ]);
  });

  it("breaks runs at blank lines, CRLF blank lines included", () => {
    expect(kinds(`${"a\n".repeat(4)}\r\n${"a\n".repeat(4)}`)).toEqual([
      ["body", `${"a\n".repeat(4)}\r\n${"a\n".repeat(4)}`],
    ]);
  });

  it("compares lines without their line breaks, so CRLF and a final line without one repeat LF lines", () => {
    const text = `${"a\r\n".repeat(4)}${"a\n".repeat(3)}a`;
    expect(kinds(text)).toEqual([["log", text]]);
  });

  it("counts repeats per span: a fence or a turn separates them", () => {
    const half = "a\n".repeat(4);
    expect(kinds(`${half}\`\`\`\nx\n\`\`\`\n${half}`).map(([kind]) => kind)).toEqual([
      "body",
      "code",
      "body",
    ]);
    expect(kinds(`User: 1\n${half}User: 2\n${half}`).map(([kind]) => kind)).toEqual([
      "body",
      "body",
    ]);
  });

  it("requires a timestamp: bracketed pids alone make no run, timestamps do", () => {
    const pids = Array.from({ length: 8 }, (_, i) => `[${1000 + i}] worker restarted\n`).join("");
    expect(kinds(pids)).toEqual([["body", pids]]);
    const syslog = Array.from({ length: 8 }, (_, i) => `Jul  ${i + 1} 10:23:45 cron ${i}\n`);
    expect(kinds(syslog.join(""))).toEqual([["log", syslog.join("")]]);
    const leading = Array.from({ length: 8 }, (_, i) => ` 2026-07-18T10:00:00Z t${i}\n`).join("");
    expect(kinds(leading)).toEqual([["body", leading]]);
  });

  it("gives one body between log runs: Body and Log alternate", () => {
    const run = "2026-07-18 10:00:00,5 x\n".repeat(8);
    const outcome = segmentTranscript(`p\nq\n${run}r\n\ns\n${run}`, { minSegmentBytes: 0 });
    expect(outcome.segments.map((s) => s.kind)).toEqual(["body", "log", "body", "log"]);
  });
});

describe("JSONL lines (§5)", () => {
  it("prepends leading blank lines to the first turn and folds later ones into the preceding turn", () => {
    const text = '\n\n{"role":"user","content":"a"}\n\n\n{"role":"assistant","content":"b"}';
    const outcome = segmentTranscript(text);
    expect(outcome.segments.map((s) => [s.byteStart, s.byteEnd, s.content])).toEqual([
      [0, 34, "a"],
      [34, text.length, "b"],
    ]);
  });

  it("accepts CRLF lines, whose ranges keep the CR", () => {
    const text = '{"role":"user","content":"a"}\r\n\r\n{"role":"user","content":"b"}\r\n';
    const outcome = segmentTranscript(text, { format: "jsonl" });
    expect(outcome.segments.map((s) => [s.byteEnd, s.content])).toEqual([
      [33, "a"],
      [text.length, "b"],
    ]);
  });

  it("treats a text with bare CR line endings as one line", () => {
    const text = '{"role":"user","content":"a"}\r{"role":"user","content":"b"}\r';
    expect(thrown(() => segmentTranscript(text, { format: "jsonl" })).message).toBe(
      "jsonl line 1: not a valid {role, content} object: trailing characters at column 31",
    );
  });

  it("numbers lines physically: a bad third line after a blank second reports line 3", () => {
    const text = '{"role":"user","content":"a"}\n\n{"role":"user"}\n';
    const error = thrown(() => segmentTranscript(text, { format: "jsonl" }));
    expect(error.message).toBe(
      "jsonl line 3: not a valid {role, content} object: missing field `content`",
    );
    expect(error).toMatchObject({ line: 3 });
  });

  it("is not blank when whitespace-only: forced JSONL fails on it", () => {
    expect(thrown(() => segmentTranscript("   \n", { format: "jsonl" })).message).toBe(
      "jsonl line 1: not a valid {role, content} object: unexpected end of input at column 4",
    );
  });

  it("allows JSON whitespace around the object and ignores extra fields", () => {
    const text = ' \t{"role":"user","content":"x","ts":1} \r\n{"role":"user","content":"y"}';
    expect(segmentTranscript(text).segments.map((s) => s.content)).toEqual(["x", "y"]);
  });

  it("falls back to plain in auto on a repeated role or content", () => {
    const text = '{"role":"user","content":"x","content":"y"}\n';
    expect(segmentTranscript(text).formatDetected).toBe("plain");
  });

  it("treats a byte order mark as text, as the original: no marker, no JSON", () => {
    expect(segmentTranscript("\ufeffUser: hi\n").segments[0].role).toBeNull();
    expect(segmentTranscript('\ufeff{"role":"user","content":"x"}\n').formatDetected).toBe("plain");
  });

  it("never rescans JSONL content for fences or logs", () => {
    const content = `\`\`\`\ncode\n\`\`\`\n${"2026-07-18T10:00:00Z x\n".repeat(8)}`;
    const outcome = segmentTranscript(`${JSON.stringify({ role: "tool", content })}\n`);
    expect(outcome.segments).toEqual([expect.objectContaining({ kind: "body", content })]);
  });

  it("never merges JSONL pieces, however small", () => {
    const text = '{"role":"a","content":"x"}\n{"role":"a","content":"y"}\n';
    const outcome = segmentTranscript(text, { minSegmentBytes: 1_000_000 });
    expect(outcome.segments).toHaveLength(2);
    expect(outcome.mergedSegments).toBe(0);
  });
});

describe("re-splitting (§9a, §9b)", () => {
  it("packs paragraphs greedily: 15 paragraphs of 100 KB give 1,000,026 + 500,010 bytes", () => {
    const text = `User: ${`${"a".repeat(100_000)}\n\n`.repeat(15)}`;
    const bodies = ofKind(segmentTranscript(text), "body");
    expect(bodies.map((b) => b.byteEnd - b.byteStart)).toEqual([1_000_026, 500_010]);
  });

  it("hard-splits a paragraph on character boundaries: 2.6 MB of é", () => {
    const text = "é".repeat(1_300_000);
    const outcome = segmentTranscript(text);
    expect(outcome.segments.map((s) => s.byteEnd - s.byteStart)).toEqual([
      1_048_576, 1_048_576, 502_848,
    ]);
    expect(outcome.segments.map((s) => s.content).join("")).toBe(text);
  });

  it("cuts a log run only between lines, and a single line over the cap alone", () => {
    const long = `2026-07-18T10:00:00Z ${"€".repeat(MAX_FRAGMENT_BYTES / 2)}\n`;
    const short = "2026-07-18T10:00:00Z short\n".repeat(4);
    const text = `${short}${long}${short}`;
    const outcome = segmentTranscript(text, { minSegmentBytes: 0 });
    expect(outcome.segments.every((s) => s.kind === "log")).toBe(true);
    expect(outcome.segments.map((s) => s.byteEnd - s.byteStart)).toEqual([
      short.length,
      MAX_FRAGMENT_BYTES - 1,
      byteLength(long) - MAX_FRAGMENT_BYTES + 1,
      short.length,
    ]);
    for (const segment of outcome.segments) expect(segment.content).toBe(rangeText(text, segment));
    expectPartition(outcome, text);
  });

  it("divides a JSONL line's range among its children in proportion to their content", () => {
    const content = `${"x".repeat(MAX_FRAGMENT_BYTES - 2)}\n\n${"y".repeat(10)}`;
    const text = `${JSON.stringify({ role: "user", content })}\n`;
    const outcome = segmentTranscript(text);
    expect(outcome.segments.map((s) => s.content)).toEqual([
      `${"x".repeat(MAX_FRAGMENT_BYTES - 2)}\n\n`,
      "y".repeat(10),
    ]);
    const span = byteLength(text);
    const firstEnd = Math.floor((span * MAX_FRAGMENT_BYTES) / (MAX_FRAGMENT_BYTES + 10));
    expect(outcome.segments.map((s) => [s.byteStart, s.byteEnd])).toEqual([
      [0, firstEnd],
      [firstEnd, span],
    ]);
  });
});

describe("partitionByWeight (§9a)", () => {
  it("ends part i at start + floor(span * cumulative_i / total), the last exactly at the end", () => {
    expect(partitionByWeight({ start: 10, end: 20 }, [1, 1, 1])).toEqual([
      { start: 10, end: 13 },
      { start: 13, end: 16 },
      { start: 16, end: 20 },
    ]);
    expect(partitionByWeight({ start: 0, end: 5 }, [0, 3, 0])).toEqual([
      { start: 0, end: 0 },
      { start: 0, end: 5 },
      { start: 5, end: 5 },
    ]);
  });

  it("counts a zero total as 1, handing the whole range to the last part", () => {
    expect(partitionByWeight({ start: 4, end: 9 }, [0, 0])).toEqual([
      { start: 4, end: 4 },
      { start: 4, end: 9 },
    ]);
  });
});

describe("merging (§9c)", () => {
  const threeFences = (a: number, b: number, c: number) =>
    `User: x\n\n${fences(1, "a".repeat(a - 9))}${fences(1, "b".repeat(b - 9))}${fences(1, "c".repeat(c - 9))}`;

  it("cascades: fences of 11, 11 and 301 bytes collapse into one", () => {
    const outcome = segmentTranscript(threeFences(11, 11, 301));
    expect(ofKind(outcome, "code").map((s) => s.byteEnd - s.byteStart)).toEqual([323]);
    expect(outcome.mergedSegments).toBe(2);
  });

  it("stops once neither side is small: 301, 11 and 301 give 312 and 301", () => {
    const outcome = segmentTranscript(threeFences(301, 11, 301));
    expect(ofKind(outcome, "code").map((s) => s.byteEnd - s.byteStart)).toEqual([312, 301]);
  });

  it("collapses 1,100 fences of 309 bytes into one with minSegmentBytes 400", () => {
    const outcome = segmentTranscript(fences(1100, "z".repeat(300)), { minSegmentBytes: 400 });
    expect(outcome.segments).toHaveLength(1);
    expect(outcome.mergedSegments).toBe(1099);
  });

  it("merges nothing with minSegmentBytes 0", () => {
    expect(
      segmentTranscript(threeFences(11, 11, 11), { minSegmentBytes: 0 }).segments,
    ).toHaveLength(4);
  });

  it("never merges across turns", () => {
    const outcome = segmentTranscript("User: a\nUser: b\n", { minSegmentBytes: 4096 });
    expect(outcome.segments).toHaveLength(2);
  });
});
