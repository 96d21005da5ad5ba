import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConversationSegmenter } from "convoseg/segmenter";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const NOW = T0 + 30 * DAY;

const run = (args: string[], stdinText = "") => runCli(args, NOW, stdinText);
/** The channel's own timeline as one stream, as before the reply linker: these are its segments. */
const CONTIGUOUS = ["--conversations", "contiguous"];

const dir = mkdtempSync(join(tmpdir(), "convoseg-cli-"));
function file(name: string, lines: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n"));
  return path;
}

/** Two channels: "a" with two conversations, "b" with a tie on timestamp broken by id. */
const sample = [
  { id: "a1", ts: new Date(T0).toISOString(), channel: "a", user: "u", text: "hi" },
  { id: "a2", ts: T0 + MINUTE, channel: "a" },
  { id: "a3", ts: T0 + 3 * DAY, channel: "a" },
  { id: "b2", ts: T0 + 5 * MINUTE, channel: "b" },
  { id: "b1", ts: T0 + 5 * MINUTE, channel: "b" },
  { id: "b3", ts: String(T0 + 6 * MINUTE), channel: "b" },
];

describe("segment command", () => {
  it("prints JSON lines of closed segments per channel, ties ordered by id", async () => {
    const { code, stdout, stderr } = await run([
      "segment",
      file("s.jsonl", sample),
      "--json",
      ...CONTIGUOUS,
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        channel: "a",
        thread: null,
        index: 1,
        first: new Date(T0).toISOString(),
        last: new Date(T0 + MINUTE).toISOString(),
        count: 2,
        cut: "start",
        gapBeforeMs: null,
        messageIds: ["a1", "a2"],
      },
      expect.objectContaining({ channel: "a", index: 2, cut: "silence", messageIds: ["a3"] }),
      expect.objectContaining({ channel: "b", index: 1, messageIds: ["b1", "b2", "b3"] }),
    ]);
    expect(lines[1].gapBeforeMs).toBe(3 * DAY - MINUTE);
  });

  it("matches the segmenter on a larger stream, with size cuts and options", async () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({
      id: `m${String(i).padStart(3, "0")}`,
      ts: T0 + Math.floor(i / 3) * 7 * MINUTE + (i % 5) * 1000,
    }));
    const path = file("big.jsonl", [...messages].reverse());
    const { code, stdout } = await run([
      "segment",
      path,
      "--json",
      ...CONTIGUOUS,
      "--max-size",
      "40",
      "--settle",
      "30m",
      "--min-items",
      "3",
      "--now",
      new Date(T0 + 33 * 60 * MINUTE).toISOString(),
    ]);
    expect(code).toBe(0);
    const expected = new ConversationSegmenter({ maxSize: 40, settle: 30 * MINUTE, minItems: 3 })
      .closedSegments(messages, T0 + 33 * 60 * MINUTE, (m) => m.ts)
      .map((segment) => segment.map((m) => m.id));
    const actual = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).messageIds);
    expect(expected.length).toBeGreaterThan(3);
    expect(actual).toEqual(expected);
    expect(stdout).toContain('"cut":"size"');
  });

  it("prints a table with counts, open and dropped messages and the gap at each cut", async () => {
    const open = [...sample, { id: "a4", ts: NOW - MINUTE, channel: "a" }];
    const { code, stdout } = await run(["segment", file("t.jsonl", open), ...CONTIGUOUS]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      'channel "a": 4 messages, 2 closed segments (3 messages), 1 open, 0 dropped',
    );
    expect(stdout).toMatch(/1 {2}2024-01-01 00:00:00Z +2024-01-01 00:01:00Z +2 {2}-/);
    expect(stdout).toMatch(
      /2 {2}2024-01-04 00:00:00Z +2024-01-04 00:00:00Z +1 {2}silence after 2d 23h/,
    );
    expect(stdout).toContain("2 channels, 7 messages, 3 closed segments");
  });

  it("counts messages below --min-items as dropped", async () => {
    const { stdout } = await run([
      "segment",
      file("d.jsonl", sample),
      "--min-items",
      "2",
      ...CONTIGUOUS,
    ]);
    expect(stdout).toContain(
      'channel "a": 3 messages, 1 closed segment (2 messages), 0 open, 1 dropped',
    );
  });

  it("puts lines without a channel in --channel NAME; lines with one keep theirs", async () => {
    const lines = [
      { id: "1", ts: T0, user: "talchas", text: "hi", system: false },
      { id: "2", ts: T0 + MINUTE, user: null, text: "ana has joined", system: true },
      { id: "3", ts: T0 + 2 * MINUTE, channel: "other" },
    ];
    const { code, stdout } = await run([
      "segment",
      file("irc.jsonl", lines),
      "--channel",
      "rust",
      "--json",
      ...CONTIGUOUS,
    ]);
    expect(code).toBe(0);
    const segments = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(segments.map((s) => [s.channel, s.messageIds])).toEqual([
      ["other", ["3"]],
      ["rust", ["1", "2"]],
    ]);
    const bad = await run(["segment", file("irc2.jsonl", lines), "--channel", " padded"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--channel must be a channel id/);
  });

  it("reads standard input for -", async () => {
    const input = `${sample.map((m) => JSON.stringify(m)).join("\n")}\n\n`;
    const { code, stdout } = await run(["segment", "-", "--json", ...CONTIGUOUS], input);
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(3);
  });

  it("rejects malformed lines with line number and field, printing nothing", async () => {
    const path = file("bad.jsonl", [
      sample[0],
      "{not json",
      { id: "x", ts: "yesterday" },
      "",
      { ts: 5 },
      { id: "a1", ts: 9, channel: "a" },
      { op: "delete", id: "a1", channel: "a" },
    ]);
    const { code, stdout, stderr } = await run(["segment", path]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("line 2: json: not valid JSON");
    expect(stderr).toContain(
      'line 3: ts: expected an ISO-8601 date-time with a time zone or epoch milliseconds (got "yesterday")',
    );
    expect(stderr).toContain("line 5: id: expected a non-empty string or an integer (got nothing)");
    expect(stderr).toContain('line 6: id: duplicate of line 1 in channel "a"');
    expect(stderr).toContain(
      "line 7: op: a delete line: only ingestion (the ingest function, IngestClient) applies edits and deletions",
    );
    expect(stderr).toContain("5 invalid lines; nothing was segmented");
  });

  it("says in one line that a file is not chat at all, not once per line", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "convoseg-notchat-")), "README.md");
    writeFileSync(path, `# A project\n\n${"Some prose about it.\n".repeat(200)}`);
    const { code, stdout, stderr } = await run(["segment", path]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trimEnd().split("\n")).toEqual([
      `segment: cannot read ${path}: it is not chat: line 1 is not valid JSON (Unexpected token '#', "# A project" is not valid JSON), and no line is a chat message; give JSON lines of chat messages (docs/commands.md#the-chat-input-format) or an export of Slack, Discord, Telegram, Mattermost or WhatsApp, or an IRC log (docs/exports.md)`,
    ]);
  });

  it("goes on without malformed lines with --skip-invalid, reporting each", async () => {
    const path = file("skip.jsonl", [sample[0], "[1,2]", sample[1]]);
    const { code, stdout, stderr } = await run([
      "segment",
      path,
      "--skip-invalid",
      "--json",
      ...CONTIGUOUS,
    ]);
    expect(code).toBe(0);
    expect(stderr).toBe("skipped line 2: message: expected a JSON object (got an array)\n");
    expect(JSON.parse(stdout).messageIds).toEqual(["a1", "a2"]);
  });

  it.each([
    [["segment"], /missing input file/],
    [["segment", "x", "y"], /expected one input file/],
    [["segment", "x", "--settle", "soon"], /--settle must be a duration/],
    [["segment", "x", "--max-size", "0"], /maxSize must be a positive integer/],
    [["segment", "x", "--min-items", "two"], /--min-items must be a positive integer/],
    [["segment", "x", "--now", "later"], /--now must be ISO-8601/],
    [["segment", "x", "--conversations", "both"], /--conversations must be linked or contiguous/],
    [["segment", "x", "--bogus"], /unknown option --bogus/],
    [["frobnicate"], /unknown command "frobnicate"/],
  ])("rejects %j with usage and exit code 2", async (args, message) => {
    const { code, stderr, stdout } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe("");
  });

  it("reports an unreadable file", async () => {
    const { code, stderr } = await run(["segment", join(dir, "missing.jsonl")]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot read .*missing\.jsonl/);
  });

  it("ignores a UTF-8 byte order mark and reads CRLF lines", async () => {
    const path = join(dir, "bom.jsonl");
    writeFileSync(path, `\ufeff${sample.map((m) => JSON.stringify(m)).join("\r\n")}\r\n`);
    const { code, stdout, stderr } = await run(["segment", path, "--json", ...CONTIGUOUS]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(3);
  });

  it("rejects a zone offset beyond 23:59 and timestamps outside the window", async () => {
    const path = file("zone.jsonl", [
      { id: "z1", ts: "2024-01-01T12:00:00+99:99" },
      { id: "z2", ts: -5 },
    ]);
    const { code, stderr } = await run(["segment", path]);
    expect(code).toBe(1);
    expect(stderr).toContain("line 1: ts: expected an ISO-8601 date-time");
    expect(stderr).toContain("line 2: ts: outside the accepted window");
  });

  it("never echoes control characters of a bad line to the terminal", async () => {
    const path = file("escape.jsonl", [
      "\u001b[31mred\u0007",
      { id: "\u001b]0;title\u0007", ts: "x" },
    ]);
    const { code, stderr } = await run(["segment", path]);
    expect(code).toBe(1);
    expect(stderr.replaceAll("\n", "")).not.toMatch(/\p{Cc}/u);
    expect(stderr).toContain("\\u001b");
  });

  it("warns when --min-items is above what --max-size admits", async () => {
    const { code, stderr } = await run([
      "segment",
      file("warn.jsonl", sample),
      "--max-size",
      "2",
      "--min-items",
      "3",
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain("warning: --min-items 3 is above --max-size 2");
  });

  it("reports a line too long to hold, and reads the lines after it", async () => {
    const huge = `{"id":"h","ts":1,"text":"${"x".repeat(17 * 1024 * 1024)}"}`;
    const input = `${huge}\n${JSON.stringify(sample[0])}\n`;
    const { code, stderr, stdout } = await run(["segment", "-", "--json", "--skip-invalid"], input);
    expect(code).toBe(0);
    expect(stderr).toBe("skipped line 1: json: line longer than 16777216 bytes\n");
    expect(JSON.parse(stdout).messageIds).toEqual(["a1"]);
  });

  it("prints help", async () => {
    const { code, stdout } = await run(["segment", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--skip-invalid");
  });
});
