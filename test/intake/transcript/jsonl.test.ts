/**
 * The JSONL shapes agent tools write (the original's gap, issue #2357), the non-message lines
 * around them, and what stays malformed. Real-world lines: Claude Code's session files, Codex
 * CLI's rollout records and OpenAI-style chat messages; whole sessions are in
 * agent-logs.test.ts.
 */

import {
  checkJsonl,
  MAX_TOOL_INPUT_BYTES,
  MAX_TOOL_RESULT_BYTES,
  SegmentationError,
  segmentTranscript,
} from "convoseg/transcript";
import { describe, expect, it } from "vitest";
import { byteLength, expectPartition, jsonLine, thrown } from "./support.js";

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
      [
        1,
        "assistant",
        '[thinking]\n\nI\'ll read the test.\n\n[tool_use: Read] {"file_path":"a.test.ts"}',
      ],
      [2, "user", "[tool_result]\nexpect(…)"],
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

/** One line's content under auto detection (the line must read as JSONL). */
const contentOf = (line: unknown) => {
  const outcome = segmentTranscript(jsonLine(line));
  expect(outcome.formatDetected).toBe("jsonl");
  return outcome.segments.map((s) => s.content).join("");
};

describe("agent-log records: a string `type`, no `role` and no `message`", () => {
  const system = {
    type: "system",
    subtype: "compact_boundary",
    content: "Conversation compacted",
    timestamp: "2026-11-28T09:15:40.000Z",
  };

  it("reads a Claude Code system line with `content` as a non-message line, not as plain text", () => {
    const text = [claudeUser, system, claudeAssistant].map(jsonLine).join("");
    const outcome = segmentTranscript(text);
    expect(outcome.formatDetected).toBe("jsonl");
    expect(outcome.segments.map((s) => [s.turn, s.role])).toEqual([
      [0, "user"],
      [1, "assistant"],
    ]);
    // The system line folds into the turn before it, as a blank line does.
    expect(outcome.segments[0].byteEnd).toBe(jsonLine(claudeUser).length + jsonLine(system).length);
    expectPartition(outcome, text);
    expect(segmentTranscript(text, { format: "jsonl" })).toEqual(outcome);
  });

  it.each([
    ["a queued prompt", { type: "queue-operation", operation: "enqueue", content: "later" }],
    ["any content", { type: "x", content: null }],
    ["a snapshot", { type: "file-history-snapshot", messageId: "m", snapshot: {} }],
    ["a Codex event", { type: "event_msg", payload: { type: "user_message", message: "hi" } }],
    [
      "a Codex reasoning item",
      { type: "response_item", payload: { type: "reasoning", content: null } },
    ],
  ])("folds %s", (_what, line) => {
    const text = `${jsonLine({ role: "user", content: "a" })}${jsonLine(line)}`;
    expect(contents(text)).toEqual([["user", "a"]]);
  });

  it("keeps the original's reading with a role, a `message` or no single string `type`", () => {
    // A role: `type` is an ignored extra field (spec §5).
    expect(contents(jsonLine({ type: "system", role: "system", content: "kept" }))).toEqual([
      ["system", "kept"],
    ]);
    // A top-level content without role stays malformed when the line is no agent-log record.
    for (const line of [
      '{"content":"x"}',
      '{"type":1,"content":"x"}',
      '{"type":"system","type":"system","content":"x"}',
      '{"type":"system","content":"x","message":{"role":"user","content":"y"}}',
      '{"type":"system","content":"x","message":null}',
    ]) {
      const error = thrown(() => segmentTranscript(`${line}\n`, { format: "jsonl" }));
      expect(error.message, line).toBe(
        "jsonl line 1: not a valid {role, content} object: missing field `role`",
      );
    }
  });

  it("gives a text of only agent-log records no message line", () => {
    const error = thrown(() => segmentTranscript(jsonLine(system), { format: "jsonl" }));
    expect(error).toEqual(new SegmentationError("no jsonl message line found"));
  });
});

describe("tool calls, tool results and timestamps", () => {
  it("summarizes a tool call's input as compact JSON, cut at the bound and marked", () => {
    const call = (input: unknown) => ({
      role: "assistant",
      content: [{ type: "tool_use", id: "t", name: "Write", input }],
    });
    expect(contentOf(call({ file_path: "a.ts", n: [1, true, null] }))).toBe(
      '[tool_use: Write] {"file_path":"a.ts","n":[1,true,null]}',
    );
    expect(contentOf(call("ls -l"))).toBe("[tool_use: Write] ls -l");
    const long = contentOf(call({ content: "é".repeat(400) }));
    const summary = long.slice("[tool_use: Write] ".length);
    const kept = summary.slice(0, summary.indexOf("…"));
    expect(byteLength(kept)).toBeLessThanOrEqual(MAX_TOOL_INPUT_BYTES);
    expect(byteLength(kept)).toBeGreaterThan(MAX_TOOL_INPUT_BYTES - 2);
    expect(
      summary.endsWith(
        `… [cut: ${byteLength(kept)} of ${byteLength(JSON.stringify({ content: "é".repeat(400) }))} bytes shown]`,
      ),
    ).toBe(true);
    // A cut never splits a surrogate pair.
    const emoji = contentOf(call("😀".repeat(100)));
    expect(emoji).toContain(`${"😀".repeat(64)}… [cut: 256 of 400 bytes shown]`);
  });

  it("keeps a tool result's text, string or parts, cut at the bound and marked", () => {
    const result = (content: unknown) => ({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t", content }],
    });
    expect(contentOf(result("exit 1"))).toBe("[tool_result]\nexit 1");
    expect(
      contentOf(
        result([{ type: "text", text: "a" }, { type: "image", source: {} }, { text: "b" }]),
      ),
    ).toBe("[tool_result]\na\n\n[image]\n\nb");
    expect(contentOf(result(null))).toBe("[tool_result]");
    expect(contentOf(result(7))).toBe("[tool_result]\n7");
    const big = contentOf(result("x".repeat(MAX_TOOL_RESULT_BYTES + 10)));
    expect(big).toBe(
      `[tool_result]\n${"x".repeat(MAX_TOOL_RESULT_BYTES)}… [cut: ${MAX_TOOL_RESULT_BYTES} of ${MAX_TOOL_RESULT_BYTES + 10} bytes shown]`,
    );
    // Exactly at the bound: nothing cut.
    expect(contentOf(result("y".repeat(MAX_TOOL_RESULT_BYTES)))).toBe(
      `[tool_result]\n${"y".repeat(MAX_TOOL_RESULT_BYTES)}`,
    );
  });

  it("reads the summaries leniently: a repeated or odd input never makes a line malformed", () => {
    const line =
      '{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{},"input":{}}]}';
    expect(contents(`${line}\n`)).toEqual([["assistant", "[tool_use: Bash]"]]);
  });

  it("reads an OpenAI chat message's tool_calls, with a null, missing or string content", () => {
    const calls = [
      { id: "c1", type: "function", function: { name: "get_order", arguments: '{"id":"7"}' } },
      { id: "c2", type: "function", function: { name: "ping" } },
      "odd",
    ];
    const expected = '[tool_call: get_order] {"id":"7"}\n\n[tool_call: ping]\n\n[tool_call]';
    expect(contentOf({ role: "assistant", content: null, tool_calls: calls })).toBe(expected);
    expect(contentOf({ role: "assistant", tool_calls: calls })).toBe(expected);
    expect(contentOf({ role: "assistant", content: "Checking.", tool_calls: calls })).toBe(
      `Checking.\n\n${expected}`,
    );
    expect(contentOf({ role: "assistant", content: "Done.", tool_calls: [] })).toBe("Done.");
    // Without tool_calls a null content stays malformed (spec §5).
    expect(reason({ role: "assistant", content: null, tool_calls: "x" })).toBe(
      "`content` must be a string or an array of parts, found null",
    );
  });

  it("reads Codex CLI records: a payload message, tool calls and their outputs", () => {
    const text = [
      { type: "session_meta", payload: { id: "s", cwd: "/x" } },
      {
        timestamp: "2026-12-02T14:00:01.500Z",
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: "Go" }] },
      },
      {
        type: "response_item",
        payload: { type: "function_call", name: "shell", arguments: '{"command":["ls"]}' },
      },
      {
        type: "response_item",
        payload: { type: "function_call_output", output: '{"output":"a.ts\\n","metadata":{}}' },
      },
      {
        type: "response_item",
        payload: { type: "local_shell_call", action: { command: ["pwd"] } },
      },
      { type: "response_item", payload: { type: "custom_tool_call_output", output: "{not json" } },
      // The older format writes the items bare.
      { type: "function_call", name: "shell", arguments: "{}" },
    ]
      .map(jsonLine)
      .join("");
    const outcome = segmentTranscript(text);
    expect(outcome.segments.map((s) => [s.role, s.content, s.timestamp])).toEqual([
      ["user", "Go", "2026-12-02T14:00:01.500Z"],
      ["assistant", '[function_call: shell] {"command":["ls"]}', undefined],
      ["tool", "[function_call_output]\na.ts\n", undefined],
      ["assistant", '[local_shell_call] {"command":["pwd"]}', undefined],
      ["tool", "[custom_tool_call_output]\n{not json", undefined],
      ["assistant", "[function_call: shell] {}", undefined],
    ]);
    expectPartition(outcome, text);
    // A payload message is read strictly, naming the field.
    expect(reason({ type: "response_item", payload: { role: "user", content: 3 } })).toBe(
      "`payload.content` must be a string or an array of parts, found a number",
    );
  });

  it("keeps a line's own string timestamp on its segments, ignoring any other", () => {
    const text = [
      { ...claudeUser, timestamp: "2026-11-28T09:14:02.511Z" },
      { role: "assistant", content: "b", timestamp: 1764321242 },
      { role: "user", content: "c" },
    ]
      .map(jsonLine)
      .join("");
    const segments = segmentTranscript(text).segments;
    expect(segments.map((s) => s.timestamp)).toEqual([
      "2026-11-28T09:14:02.511Z",
      undefined,
      undefined,
    ]);
    expect("timestamp" in segments[1]).toBe(false);
    // A repeated timestamp is ignored, never malformed.
    const repeated = '{"role":"user","content":"x","timestamp":"a","timestamp":"b"}\n';
    expect(segmentTranscript(repeated).segments[0]).not.toHaveProperty("timestamp");
    // Plain text carries none.
    expect(segmentTranscript("User: hi\n").segments[0]).not.toHaveProperty("timestamp");
  });
});

describe("checkJsonl", () => {
  it("lists every malformed line with the reason forced JSONL gives for the first", () => {
    const text = `${jsonLine({ role: "user", content: "a" })}{"content":"x"}\n\n   \n${jsonLine({ type: "summary" })}{"role":"user","content":"cut`;
    const check = checkJsonl(text);
    expect(check).toEqual({
      lines: 6,
      messageLines: 1,
      problems: [
        { line: 2, reason: "missing field `role`" },
        { line: 4, reason: "unexpected end of input at column 4" },
        { line: 6, reason: "unexpected end of input at column 30" },
      ],
    });
    const error = thrown(() => segmentTranscript(text, { format: "jsonl" }));
    expect(error.message).toBe(
      `jsonl line 2: not a valid {role, content} object: ${check.problems[0].reason}`,
    );
  });

  it("finds nothing wrong in a JSONL text, and counts its message lines", () => {
    const text = [claudeUser, summary, claudeAssistant].map(jsonLine).join("");
    expect(checkJsonl(text)).toEqual({ lines: 3, messageLines: 2, problems: [] });
  });
});
