/**
 * The JSONL shapes agent tools write (the original's gap, issue #2357), the non-message lines
 * around them, and what stays malformed. Real-world lines: Claude Code's session files and
 * OpenAI-style chat messages.
 */
import { describe, expect, it } from "vitest";
import { SegmentationError, segmentTranscript } from "../../lib/transcript/index.js";
import { expectPartition, jsonLine, thrown } from "./support.js";

const claudeUser = {
  type: "user",
  message: { role: "user", content: [{ type: "text", text: "Fix the flaky date test" }] },
  uuid: "0b6f1e9a-5c7e-4f1e-8d7a-0c9e3b2a1d01",
  timestamp: "2026-11-28T09:14:02.511Z",
};
const claudeAssistant = {
  type: "assistant",
  message: {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4",
    content: [
      { type: "thinking", thinking: "Look at the formatter first.", signature: "sig" },
      { type: "text", text: "I'll read the test." },
      { type: "tool_use", id: "toolu_01", name: "Read", input: { file_path: "a.test.ts" } },
    ],
    usage: { input_tokens: 10, output_tokens: 20 },
  },
  uuid: "1c7f2f0b-6d8f-4a2f-9e8b-1d0f4c3b2e02",
};
const claudeToolResult = {
  type: "user",
  message: {
    role: "user",
    content: [{ tool_use_id: "toolu_01", type: "tool_result", content: "expect(…)" }],
  },
  toolUseResult: { stdout: "…" },
};
const summary = { type: "summary", summary: "Fix flaky date test", leafUuid: "7d1c0c3e" };

const contents = (text: string) => segmentTranscript(text).segments.map((s) => [s.role, s.content]);
const reason = (line: unknown) =>
  thrown(() => segmentTranscript(jsonLine(line), { format: "jsonl" })).message.replace(
    "jsonl line 1: not a valid {role, content} object: ",
    "",
  );

describe("JSONL shapes", () => {
  it("reads a Claude Code session: wrappers, parts, tags, and a leading summary line", () => {
    const text = [summary, claudeUser, claudeAssistant, claudeToolResult].map(jsonLine).join("");
    const outcome = segmentTranscript(text);
    expect(outcome.formatDetected).toBe("jsonl");
    expect(outcome.segments.map((s) => [s.turn, s.role, s.content])).toEqual([
      [0, "user", "Fix the flaky date test"],
      [1, "assistant", "[thinking]\n\nI'll read the test.\n\n[tool_use: Read]"],
      [2, "user", "[tool_result]"],
    ]);
    expect(outcome.segments[0].byteStart).toBe(0);
    expectPartition(outcome, text);
  });

  it("reads OpenAI-style messages, string and array content, extra fields ignored", () => {
    const text = [
      { role: "system", content: "Answer briefly." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture?" },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
        ],
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "A cat." }] },
      { role: "user", content: [{ type: "input_text", text: "Thanks" }, { type: "image" }] },
      { role: "tool", content: "42", tool_call_id: "call_1", ts: 1 },
    ]
      .map(jsonLine)
      .join("");
    expect(contents(text)).toEqual([
      ["system", "Answer briefly."],
      ["user", "What is in this picture?\n\n[image_url]"],
      ["assistant", "A cat."],
      ["user", "Thanks\n\n[image]"],
      ["tool", "42"],
    ]);
    expect(segmentTranscript(text).segments[0].metadata).toEqual({
      role: "system",
      turn: 0,
      cache: true,
    });
  });

  it("gives an empty parts array empty content, and takes any role verbatim", () => {
    expect(contents(jsonLine({ role: "SYSTEM", content: [] }))).toEqual([["SYSTEM", ""]]);
    expect(contents(jsonLine({ role: "", content: "x" }))).toEqual([["", "x"]]);
  });

  it("decodes escapes in content, which is then no slice of the range", () => {
    const text = '{"role":"user","content":"tab\\there \\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/"}\n';
    expect(contents(text)).toEqual([["user", 'tab\there é 😀 "q" \\ /']]);
  });

  it("reads a line with a top-level role and content as the original: `message` is ignored", () => {
    // spec §5: extra fields are ignored, so a valid {role, content} line keeps its reading.
    const line = { role: "system", content: "kept", message: { role: "user", content: "no" } };
    expect(contents(jsonLine(line))).toEqual([["system", "kept"]]);
    expect(contents(jsonLine({ role: "user", content: "kept", message: null }))).toEqual([
      ["user", "kept"],
    ]);
  });

  it("folds non-message lines like blank lines: into the preceding turn, or the first one", () => {
    const text = [summary, { role: "user", content: "a" }, summary, { role: "user", content: "b" }]
      .map(jsonLine)
      .join("");
    const outcome = segmentTranscript(text);
    const lineLength = (value: unknown) => jsonLine(value).length;
    expect(outcome.segments.map((s) => [s.turn, s.byteStart, s.byteEnd])).toEqual([
      [0, 0, lineLength(summary) * 2 + lineLength({ role: "user", content: "a" })],
      [1, lineLength(summary) * 2 + lineLength({ role: "user", content: "a" }), text.length],
    ]);
  });

  it("takes any object without role, content and message for a non-message line, {} included", () => {
    const text = [
      { role: "user", content: "a" },
      {},
      { ts: 1 },
      { role: "assistant", content: "b" },
    ]
      .map(jsonLine)
      .join("");
    const outcome = segmentTranscript(text, { format: "jsonl" });
    expect(outcome.segments.map((s) => [s.turn, s.role, s.content])).toEqual([
      [0, "user", "a"],
      [1, "assistant", "b"],
    ]);
    expect(outcome.segments[1].byteStart).toBe(text.lastIndexOf("{"));
  });

  it("reports a text of only non-message lines as having no message line", () => {
    const error = thrown(() => segmentTranscript(jsonLine(summary), { format: "jsonl" }));
    expect(error).toEqual(new SegmentationError("no jsonl message line found"));
    expect(segmentTranscript(jsonLine(summary)).formatDetected).toBe("plain");
  });

  it("gives a line with content but no role, or a non-object line, the line number", () => {
    const text = `${jsonLine({ role: "user", content: "a" })}${jsonLine({ content: "x" })}`;
    const error = thrown(() => segmentTranscript(text, { format: "jsonl" }));
    expect(error.message).toBe(
      "jsonl line 2: not a valid {role, content} object: missing field `role`",
    );
    expect(error).toMatchObject({ line: 2 });
    expect(segmentTranscript(text).formatDetected).toBe("plain");
  });

  it.each([
    [[1, 2], "expected a JSON object, found an array"],
    ["text", "expected a JSON object, found a string"],
    [null, "expected a JSON object, found null"],
    [{ role: "user" }, "missing field `content`"],
    [{ role: 1, content: "x" }, "`role` must be a string, found a number"],
    [
      { role: "user", content: null },
      "`content` must be a string or an array of parts, found null",
    ],
    [
      { role: "user", content: { text: "x" } },
      "`content` must be a string or an array of parts, found an object",
    ],
    [{ role: "user", content: ["x"] }, "`content[0]` must be an object, found a string"],
    [{ role: "user", content: [{ text: "x" }] }, "missing field `content[0].type`"],
    [
      { role: "user", content: [{ type: 3 }] },
      "`content[0].type` must be a string, found a number",
    ],
    [{ role: "user", content: [{ type: "text" }] }, "missing field `content[0].text`"],
    [{ type: "user", message: "hi" }, "`message` must be an object, found a string"],
    [{ type: "user", message: null }, "`message` must be an object, found null"],
    [{ type: "user", message: { content: "x" } }, "missing field `message.role`"],
    [
      { message: { role: "user", content: [{ type: "text", text: 1 }] } },
      "`message.content[0].text` must be a string, found a number",
    ],
  ])("rejects %j: %s", (line, expected) => {
    expect(reason(line)).toBe(expected);
  });

  it.each([
    ['{"role":"user","role":"user","content":"x"}', "duplicate field `role`"],
    ['{"role":"user","content":"x","content":"y"}', "duplicate field `content`"],
    ['{"message":{"role":"a","content":"x"},"message":{}}', "duplicate field `message`"],
    ['{"message":{"role":"a","role":"b","content":"x"}}', "duplicate field `message.role`"],
    [
      '{"role":"a","content":[{"type":"text","type":"text","text":"x"}]}',
      "duplicate field `content[0].type`",
    ],
    ['{"role":"user","content":"\\ud800"}', "lone surrogate in \\u escape at column 27"],
    ['\ufeff{"role":"user","content":"x"}', "expected value at column 1"],
    ['{"role":"user","content":"x"} x', "trailing characters at column 31"],
  ])("rejects %s: %s", (line, expected) => {
    const error = thrown(() => segmentTranscript(`${line}\n`, { format: "jsonl" }));
    expect(error.message).toBe(`jsonl line 1: not a valid {role, content} object: ${expected}`);
  });

  it("accepts a repeated field it does not read, as serde ignores unknown fields", () => {
    expect(contents('{"role":"user","content":"x","ts":1,"ts":2}\n')).toEqual([["user", "x"]]);
  });
});
