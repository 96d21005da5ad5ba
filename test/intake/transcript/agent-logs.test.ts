/**
 * Whole sessions in the shapes agent tools write, from fixtures written for this project (no
 * real session is copied): Claude Code (`~/.claude/projects/…/<session>.jsonl`), Codex CLI
 * (`~/.codex/sessions/…/rollout-….jsonl`) and OpenAI-style chat logs. Each is read as JSONL,
 * with its roles, its tool calls and results, its own timestamps and its non-message lines.
 */
import { readFileSync } from "node:fs";
import {
  checkJsonl,
  importedTurns,
  MAX_TOOL_RESULT_BYTES,
  segmentTranscript,
  transcriptMessages,
} from "convoseg/transcript";
import { describe, expect, it } from "vitest";
import { byteLength, expectPartition } from "./support.js";

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/${name}.jsonl`, import.meta.url), "utf8");
const lines = (text: string) => text.trimEnd().split("\n");

function read(name: string) {
  const text = fixture(name);
  const outcome = segmentTranscript(text);
  const turns = importedTurns(outcome);
  return { text, outcome, turns, messages: transcriptMessages(text, turns) };
}

describe("a Claude Code session", () => {
  const { text, outcome, turns, messages } = read("claude-code");

  it("reads as JSONL: its summary, snapshot, system and queue lines open no turn", () => {
    expect(outcome.formatDetected).toBe("jsonl");
    expect(checkJsonl(text).problems).toEqual([]);
    const types = lines(text).map((line) => JSON.parse(line).type);
    expect(types).toEqual(
      expect.arrayContaining(["summary", "file-history-snapshot", "system", "queue-operation"]),
    );
    const messageLines = types.filter((type) => type === "user" || type === "assistant");
    expect(turns).toHaveLength(messageLines.length);
    // The system lines carry `content`, which is not a message.
    expect(turns.map((turn) => turn.rendered).join("")).not.toContain("Conversation compacted");
    expect(turns.map((turn) => turn.rendered).join("")).not.toContain("credit note");
    expectPartition(outcome, text);
  });

  it("keeps the roles: user, assistant, and tool results in user turns", () => {
    expect(turns.map((turn) => turn.label)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
  });

  it("keeps each tool call's name and input, and each result's text, bounded", () => {
    expect(turns[1].rendered).toBe(
      [
        "[thinking]",
        "I'll run the test with a time zone behind UTC.",
        '[tool_use: Bash] {"command":"TZ=America/New_York npx vitest run src/invoice/format.test.ts","description":"Run the date test in New York time"}',
      ].join("\n\n"),
    );
    expect(turns[2].rendered).toBe(
      "[tool_result]\nFAIL src/invoice/format.test.ts > formats the invoice date\nAssertionError: expected '28 February 2026' to be '1 March 2026'\n Test Files  1 failed (1)",
    );
    expect(turns[3].rendered).toBe(
      '[tool_use: Read] {"file_path":"/home/dev/invoices/src/invoice/format.ts"}',
    );
    // The file read is longer than the bound: its first 2 KiB, then the mark of the cut.
    const read = turns[4].rendered;
    expect(read.startsWith("[tool_result]\n   1\texport function formatLine0")).toBe(true);
    const cut = /… \[cut: (\d+) of (\d+) bytes shown\]$/.exec(read);
    expect(cut).not.toBeNull();
    expect(Number(cut?.[1])).toBe(MAX_TOOL_RESULT_BYTES);
    expect(Number(cut?.[2])).toBeGreaterThan(MAX_TOOL_RESULT_BYTES);
    expect(byteLength(read.slice("[tool_result]\n".length, read.indexOf("… [cut:")))).toBe(
      MAX_TOOL_RESULT_BYTES,
    );
  });

  it("keeps the session's timestamps: on the turns as written, on the messages as ts", () => {
    const written = lines(text)
      .map((line) => JSON.parse(line))
      .filter((line) => line.message !== undefined)
      .map((line) => line.timestamp);
    expect(turns.map((turn) => turn.timestamp)).toEqual(written);
    expect(messages.map((message) => message.ts)).toEqual(written.map((t) => Date.parse(t)));
    expect(messages[0].metadata).toMatchObject({ timestamp: "2026-11-28T09:14:02.511Z" });
  });
});

describe("a Codex CLI session", () => {
  const { text, outcome, turns, messages } = read("codex-cli");

  it("reads as JSONL: session_meta, turn_context, event_msg and reasoning open no turn", () => {
    expect(outcome.formatDetected).toBe("jsonl");
    expect(checkJsonl(text).problems).toEqual([]);
    const rendered = turns.map((turn) => turn.rendered).join("\n");
    expect(rendered).not.toContain("Finding where the pool is used");
    expect(rendered).not.toContain("gpt-5-codex");
    // The user's prompt is in a response item and again in an event: it is read once.
    expect(rendered.split("The nightly export fails").length - 1).toBe(1);
    expectPartition(outcome, text);
  });

  it("keeps the roles: payload messages as written, calls from the assistant, outputs as tool", () => {
    expect(turns.map((turn) => [turn.label, turn.rendered.split("\n")[0]])).toEqual([
      ["user", "<environment_context>"],
      [
        "user",
        "The nightly export fails with a connection pool timeout. Make it retry the connection.",
      ],
      [
        "assistant",
        '[function_call: shell] {"command":["bash","-lc","rg -n \'pool.connect\' src"],"workdir":"/home/dev/shop"}',
      ],
      ["tool", "[function_call_output]"],
      ["assistant", "[custom_tool_call: apply_patch] *** Begin Patch"],
      ["tool", "[custom_tool_call_output]"],
      [
        "assistant",
        "The export now retries `pool.connect()` three times with a growing backoff (`src/jobs/retry.ts`).",
      ],
    ]);
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
  });

  it("keeps a command's output unwrapped from its metadata, and cuts a long patch", () => {
    expect(turns[3].rendered).toBe(
      "[function_call_output]\nsrc/jobs/export.ts:12:  const client = await pool.connect();\n",
    );
    expect(turns[5].rendered).toBe(
      "[custom_tool_call_output]\nSuccess. Updated the following files:\nM src/jobs/export.ts\nA src/jobs/retry.ts\n",
    );
    expect(turns[4].rendered).toMatch(/… \[cut: 25\d of \d+ bytes shown\]$/);
  });

  it("keeps each record's timestamp", () => {
    expect(turns.map((turn) => turn.timestamp)).toEqual([
      "2026-12-02T14:00:00.120Z",
      "2026-12-02T14:00:01.500Z",
      "2026-12-02T14:00:03.400Z",
      "2026-12-02T14:00:03.900Z",
      "2026-12-02T14:00:09.000Z",
      "2026-12-02T14:00:09.400Z",
      "2026-12-02T14:00:12.700Z",
    ]);
    expect(messages[2].ts).toBe(Date.UTC(2026, 11, 2, 14, 0, 3, 400));
  });
});

describe("an OpenAI-style chat log", () => {
  const { text, outcome, turns, messages } = read("openai-chat");

  it("reads as JSONL with its roles, a null content beside tool_calls included", () => {
    expect(outcome.formatDetected).toBe("jsonl");
    expect(checkJsonl(text).problems).toEqual([]);
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(messages[0].metadata).toMatchObject({ cache: true });
  });

  it("keeps the tool calls after the content and the tool results as written", () => {
    expect(turns[2].rendered).toBe('[tool_call: get_order] {"order_id":"1042"}');
    expect(turns[3].rendered).toBe(
      '{"order_id":"1042","status":"shipped","carrier":"DHL","tracking":"JD0146000012345678"}',
    );
    expect(turns[6].rendered).toBe(
      "I'll start the refund and look up the return address.\n\n" +
        '[tool_call: create_refund] {"order_id":"1042","reason":"damaged"}\n\n' +
        "[tool_call: return_address] {}",
    );
    expect(turns[8].rendered).toBe("Returns, Lagerstrasse 5, 20457 Hamburg");
  });

  it("has no timestamps, so neither do its turns and messages", () => {
    expect(turns.every((turn) => turn.timestamp === null)).toBe(true);
    expect(messages.every((message) => message.ts === undefined)).toBe(true);
    expect(messages[0].metadata).not.toHaveProperty("timestamp");
  });
});

describe("a turn's timestamp as the message's ts", () => {
  it("takes an ISO-8601 date-time with a zone; keeps any other string in the metadata only", () => {
    const text = [
      '{"role":"user","content":"a","timestamp":"2026-11-28T10:14:02+01:00"}',
      '{"role":"user","content":"b","timestamp":"yesterday"}',
      '{"role":"user","content":"c","timestamp":"2026-11-28T09:14:02"}',
    ].join("\n");
    const turns = importedTurns(segmentTranscript(text));
    const messages = transcriptMessages(text, turns);
    expect(messages.map((message) => message.ts)).toEqual([
      Date.UTC(2026, 10, 28, 9, 14, 2),
      undefined,
      undefined,
    ]);
    expect(messages.map((message) => message.metadata?.timestamp)).toEqual([
      "2026-11-28T10:14:02+01:00",
      "yesterday",
      "2026-11-28T09:14:02",
    ]);
  });
});
