/**
 * The 20 tests of the original's `segment_tests.rs` (`docs/specs/transcript.md` §13), in order,
 * with the original's names. Every call uses the default policy unless the test says otherwise.
 */

import {
  ContextOverLimitError,
  MAX_FRAGMENT_BYTES,
  MAX_FRAGMENTS,
  MAX_TRANSCRIPT_BYTES,
  SegmentationError,
  segmentTranscript,
} from "convoseg/transcript";
import { describe, expect, it } from "vitest";
import {
  byteLength,
  expectPartition,
  jsonLine,
  ofKind,
  thrown,
  timestampedLines,
} from "./support.js";

/** System, User, a fence, Assistant and 8 timestamped lines (tests 12 and 13). */
const timestamps = Array.from({ length: 8 }, (_, i) => `2026-07-18T10:00:0${i}Z tick\n`);
const mixed = `System: be terse\nUser: run it\n\`\`\`rust\nfn f() {}\n\`\`\`\nAssistant: watch\n${timestamps.join("")}`;

const userTurns = (count: number) =>
  Array.from({ length: count }, (_, i) => `User: turn ${i}\n`).join("");

describe("segmentTranscript: the original's segment tests", () => {
  it("1. plain_text_without_markers_is_single_body_segment", () => {
    const text = "The deploy pipeline is green.\nNothing else to report.";
    const outcome = segmentTranscript(text);
    expect(outcome.formatDetected).toBe("plain");
    expect(outcome.segments).toEqual([
      {
        turn: 0,
        role: null,
        kind: "body",
        byteStart: 0,
        byteEnd: text.length,
        content: text,
        metadata: { role: null, turn: 0 },
      },
    ]);
  });

  it("2. user_assistant_markers_split_turns", () => {
    const outcome = segmentTranscript(
      "User: what is the deploy status?\nAssistant: it is green.\n",
    );
    expect(outcome.formatDetected).toBe("plain");
    expect(outcome.segments.map((s) => s.role)).toEqual(["User", "Assistant"]);
    expect(outcome.segments.map((s) => s.turn)).toEqual([0, 1]);
    expect(outcome.segments[0].content.startsWith("User:")).toBe(true);
    expect(outcome.segments[1].content.startsWith("Assistant:")).toBe(true);
  });

  it("3. jsonl_roles_detected_and_forced_format_errors_on_bad_line", () => {
    const good = '{"role":"system","content":"be terse"}\n{"role":"user","content":"hi"}\n';
    const outcome = segmentTranscript(good, { format: "jsonl" });
    expect(outcome.formatDetected).toBe("jsonl");
    expect(outcome.segments.map((s) => [s.role, s.content])).toEqual([
      ["system", "be terse"],
      ["user", "hi"],
    ]);

    const bad = '{"role":"system","content":"be terse"}\nnot json at all\n';
    const error = thrown(() => segmentTranscript(bad, { format: "jsonl" }));
    expect(error).toBeInstanceOf(SegmentationError);
    expect(error.message).toContain("line 2");
    expect(error).toMatchObject({ line: 2, code: "TRANSCRIPT_SEGMENTATION_FAILED" });
  });

  it("4. forced_jsonl_no_nonblank_line_is_also_segmentation_error", () => {
    const error = thrown(() => segmentTranscript("\n\n", { format: "jsonl" }));
    expect(error).toBeInstanceOf(SegmentationError);
    expect(error.message).toBe("no non-blank jsonl line found");
  });

  it("5. genuine_budget_breaches_still_return_context_over_limit", () => {
    const breaches = [
      () => segmentTranscript("a".repeat(MAX_TRANSCRIPT_BYTES + 1)),
      () => segmentTranscript(userTurns(MAX_FRAGMENTS + 1), { minSegmentBytes: 0 }),
      () => segmentTranscript(`\`\`\`\n${"a".repeat(MAX_FRAGMENT_BYTES + 1)}\n\`\`\`\n`),
    ];
    for (const breach of breaches) {
      const error = thrown(breach);
      expect(error).toBeInstanceOf(ContextOverLimitError);
      expect(error).toMatchObject({ code: "TRANSCRIPT_CONTEXT_OVER_LIMIT" });
    }
  });

  it("6. resplit_jsonl_content_override_children_get_distinct_nonoverlapping_ranges", () => {
    const text = jsonLine({ role: "user", content: "a".repeat(2 * MAX_FRAGMENT_BYTES + 100) });
    const outcome = segmentTranscript(text, { format: "jsonl" });
    expect(outcome.segments.length).toBeGreaterThan(1);
    for (const segment of outcome.segments) {
      expect(byteLength(segment.content)).toBeLessThanOrEqual(MAX_FRAGMENT_BYTES);
      expect(segment).toMatchObject({ turn: 0, role: "user", kind: "body" });
    }
    expect(outcome.segments.map((s) => s.content).join("")).toBe(
      "a".repeat(2 * MAX_FRAGMENT_BYTES + 100),
    );
    expectPartition(outcome, text);
  });

  it("7. code_fence_becomes_atomic_code_segment", () => {
    const outcome = segmentTranscript("User: run this\n```rust\nfn main() {}\n```\nUser: thanks\n");
    const code = ofKind(outcome, "code");
    expect(code).toHaveLength(1);
    expect(code[0].content).toBe("```rust\nfn main() {}\n```\n");
  });

  it("8. log_run_with_volatile_prefixes_becomes_log_segment", () => {
    const lines = Array.from({ length: 8 }, (_, i) => `2026-07-18T10:00:0${i}Z request handled\n`);
    const outcome = segmentTranscript(`User: what happened?\n${lines.join("")}`);
    const logs = ofKind(outcome, "log");
    expect(logs).toHaveLength(1);
    expect(logs[0].content).toBe(lines.join(""));
  });

  it("9. repeated_lines_run_becomes_log_segment", () => {
    const outcome = segmentTranscript(`User: watch this\n${"connection retry failed\n".repeat(8)}`);
    expect(ofKind(outcome, "log")).toHaveLength(1);
  });

  it("10. system_turn_gets_cache_metadata", () => {
    const outcome = segmentTranscript("System: be terse.\nUser: hello\n");
    expect(outcome.segments.map((s) => s.metadata)).toEqual([
      { role: "System", turn: 0, cache: true },
      { role: "User", turn: 1 },
    ]);
    expect("cache" in outcome.segments[1].metadata).toBe(false);
  });

  it("11. tiny_segments_merge_within_turn_same_kind", () => {
    const outcome = segmentTranscript("User: two blocks\n```\na\n```\n```\nb\n```\n", {
      minSegmentBytes: 4096,
    });
    const code = ofKind(outcome, "code");
    expect(code).toHaveLength(1);
    expect(code[0].content).toBe("```\na\n```\n```\nb\n```\n");
    expect(ofKind(outcome, "body")).toHaveLength(1);
    expect(outcome.mergedSegments).toBeGreaterThan(0);
  });

  it("12. segmentation_twice_is_byte_identical", () => {
    const first = segmentTranscript(mixed);
    const second = segmentTranscript(mixed);
    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it("13. segment_ranges_cover_transcript_exactly", () => {
    const outcome = segmentTranscript(mixed);
    expect(outcome.segments.map((s) => s.kind)).toEqual(["body", "body", "code", "body", "log"]);
    expectPartition(outcome, mixed);
  });

  it("14. over_max_fragments_errors_with_actionable_message", () => {
    const error = thrown(() =>
      segmentTranscript(userTurns(MAX_FRAGMENTS + 1), { minSegmentBytes: 0 }),
    );
    expect(error).toBeInstanceOf(ContextOverLimitError);
    expect(error.message).toContain("minSegmentBytes");
    expect(error.message).toContain("transcript segmented into 1025 fragments");
    expect(error).toMatchObject({ cap: "MAX_FRAGMENTS", limit: 1024, actual: 1025 });
  });

  it("15. oversized_fence_errors", () => {
    const text = `\`\`\`\n${"a".repeat(MAX_FRAGMENT_BYTES + 1)}\n\`\`\`\n`;
    const error = thrown(() => segmentTranscript(text));
    expect(error).toBeInstanceOf(ContextOverLimitError);
    expect(error.message).toBe(
      `an unsplittable fenced code block of ${text.length} bytes exceeds the cap of 1048576 bytes`,
    );
    expect(error).toMatchObject({ cap: "MAX_FRAGMENT_BYTES", actual: text.length });
  });

  it("16. transcript_over_cap_rejected", () => {
    const error = thrown(() => segmentTranscript("a".repeat(MAX_TRANSCRIPT_BYTES + 1)));
    expect(error).toBeInstanceOf(ContextOverLimitError);
    expect(error.message).toBe("transcript of 8388609 bytes exceeds the cap of 8388608 bytes");
    expect(error).toMatchObject({ cap: "MAX_TRANSCRIPT_BYTES", limit: 8388608, actual: 8388609 });
  });

  it("17. oversized_log_run_is_resplit_not_left_over_the_cap", () => {
    const text = `User: watch this\n${timestampedLines(Math.floor(MAX_FRAGMENT_BYTES / 30) + 100)}`;
    expect(text.length).toBeGreaterThan(MAX_FRAGMENT_BYTES);
    const outcome = segmentTranscript(text);
    const logs = ofKind(outcome, "log");
    expect(logs.length).toBeGreaterThan(1);
    for (const log of logs) {
      expect(byteLength(log.content)).toBeLessThanOrEqual(MAX_FRAGMENT_BYTES);
      expect(log.content.endsWith("\n")).toBe(true);
    }
    expectPartition(outcome, text);
  });

  it("18. merge_never_recombines_a_resplit_body_over_the_fragment_cap", () => {
    const text = `User: ${"a".repeat(MAX_FRAGMENT_BYTES - 5)}\n\ntiny tail\n`;
    const bodies = ofKind(segmentTranscript(text), "body");
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    for (const body of bodies)
      expect(byteLength(body.content)).toBeLessThanOrEqual(MAX_FRAGMENT_BYTES);
    expect(bodies.map((b) => b.byteEnd - b.byteStart)).toEqual([MAX_FRAGMENT_BYTES, 13]);
  });

  it("19. merge_never_recombines_adjacent_fences_over_the_fragment_cap", () => {
    const near = "b".repeat(MAX_FRAGMENT_BYTES - 14);
    const text = `User: two blocks\n\`\`\`\na\n\`\`\`\n\`\`\`\n${near}\n\`\`\`\n`;
    const code = ofKind(segmentTranscript(text), "code");
    expect(code).toHaveLength(2);
    for (const block of code)
      expect(byteLength(block.content)).toBeLessThanOrEqual(MAX_FRAGMENT_BYTES);
  });

  it("20. jsonl_tolerates_a_blank_line_between_turns", () => {
    const text = '{"role":"system","content":"be terse"}\n\n{"role":"user","content":"hi"}\n';
    const outcome = segmentTranscript(text);
    expect(outcome.formatDetected).toBe("jsonl");
    expect(outcome.segments.map((s) => [s.turn, s.role, s.byteStart, s.byteEnd])).toEqual([
      [0, "system", 0, 40],
      [1, "user", 40, text.length],
    ]);
    expectPartition(outcome, text);
  });
});
