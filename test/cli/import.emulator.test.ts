import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { MAX_FRAGMENT_BYTES, MAX_FRAGMENTS, MAX_TRANSCRIPT_BYTES } from "convoseg/transcript";
import { beforeEach, describe, expect, it } from "vitest";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-import-"));
const cli = (args: string[], stdin = "") => runCli(args, Date.UTC(2026, 11, 1), stdin);
const client = testDynamoDbClient();
let tables = 0;

async function historyTable(): Promise<string> {
  const name = `import-test-${Date.now()}-${tables++}`;
  await createMessagesTable(client, name);
  return name;
}

beforeEach(() => {
  stubLocalAws();
});

interface DryRun {
  formatDetected: string;
  segments: {
    index: number;
    turn: number;
    role: string | null;
    kind: string;
    byteStart: number;
    byteEnd: number;
  }[];
  mergedSegments: number;
}

describe("import command", () => {
  it("reports a plain transcript's segmentation without writing: body, code and log parts", async () => {
    const run = await cli([
      "import",
      "examples/agent-session.txt",
      "--conversation",
      "demo",
      "--dry-run",
      "--json",
    ]);

    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as DryRun;
    expect(Object.keys(report)).toEqual(["formatDetected", "segments", "mergedSegments", "input"]);
    expect(report.formatDetected).toBe("plain");
    expect(report.segments.map((s) => s.kind)).toEqual(
      expect.arrayContaining(["body", "code", "log"]),
    );
    expect(Object.keys(report.segments[0])).toEqual([
      "index",
      "turn",
      "role",
      "kind",
      "byteStart",
      "byteEnd",
    ]);
    // The ranges partition the file.
    expect(report.segments[0].byteStart).toBe(0);
    for (let i = 1; i < report.segments.length; i++) {
      expect(report.segments[i].byteStart).toBe(report.segments[i - 1].byteEnd);
    }
    const table = await cli([
      "import",
      "examples/agent-session.txt",
      "--conversation",
      "demo",
      "--dry-run",
    ]);
    expect(table.stdout).toMatch(
      /^format plain, \d+ segments?, \d+ merged\nindex +turn +role +kind +byte range +bytes\n0 +0 +System +body +0\.\.\d+ +\d+/,
    );
  });

  it("stores each turn once: a re-import stores nothing new", async () => {
    const table = await historyTable();
    const args = [
      "import",
      "examples/agent-session.txt",
      "--conversation",
      "repeat",
      "--table",
      table,
      "--json",
    ];

    const first = JSON.parse((await cli(args)).stdout);
    const second = JSON.parse((await cli(args)).stdout);

    expect(first.stored).toBe(first.turns.length);
    expect(first.unchanged).toBe(0);
    expect(second.stored).toBe(0);
    expect(second.unchanged).toBe(first.turns.length);
    const stored = await new DynamoDbStore({ client, tableName: table }).read("repeat");
    expect(stored.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(stored.map((m) => m.id)).toEqual(first.turns.map((t: { id: string }) => t.id));
    expect(stored[0].metadata).toMatchObject({ role: "System", turn: 0, cache: true });
    // The model is shown the log run as its distinct lines with repeat counts.
    const logTurn = first.turns[3].rendered as string;
    expect(logTurn).toContain("ERROR connection pool timeout after 30000 ms (x8)");
    expect(first.turns[4].rendered).toContain("```ts\nconst client = await pool.connect();");
  });

  it("maps JSONL roles and reads the nested shape agent tools write", async () => {
    const table = await historyTable();
    const flat = JSON.parse(
      (
        await cli([
          "import",
          "examples/agent-session.jsonl",
          "--conversation",
          "flat",
          "--table",
          table,
          "--json",
        ])
      ).stdout,
    );
    const nested = JSON.parse(
      (
        await cli([
          "import",
          "examples/claude-code-session.jsonl",
          "--conversation",
          "nested",
          "--table",
          table,
          "--json",
        ])
      ).stdout,
    );

    expect(flat.formatDetected).toBe("jsonl");
    expect(flat.turns.map((t: { role: string }) => t.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(nested.formatDetected).toBe("jsonl");
    expect(nested.turns.map((t: { role: string }) => t.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    const toolCall = nested.turns[1].rendered as string;
    expect(toolCall).toContain("I'll look at the test and the formatter.");
    expect(toolCall).toContain('[tool_use: Read] {"file_path":"src/invoice/format.test.ts"}');
    expect(nested.turns[2].rendered).toBe(
      "[tool_result]\nexpect(formatDate(new Date('2026-03-01T00:30:00Z'))).toBe('1 March 2026')",
    );
    // The session's system line (with `content`) is no message and no reason to read plain text.
    expect(nested.input.fallback).toBeNull();
  });

  it("keeps the session's timestamps: in --json, in the table and as the stored messages' ts", async () => {
    const table = await historyTable();
    const args = [
      "import",
      "test/intake/transcript/fixtures/claude-code.jsonl",
      "--conversation",
      "cc",
    ];
    const run = await cli([...args, "--table", table, "--json"]);

    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual([
      "conversation",
      "table",
      "formatDetected",
      "mergedSegments",
      "stored",
      "unchanged",
      "turns",
      "input",
    ]);
    expect(Object.keys(report.turns[0])).toEqual([
      "index",
      "id",
      "role",
      "label",
      "byteStart",
      "byteEnd",
      "rendered",
      "timestamp",
    ]);
    expect(report.turns[0].timestamp).toBe("2026-11-28T09:14:02.511Z");
    const stored = await new DynamoDbStore({ client, tableName: table }).read("cc");
    expect(stored.map((m) => m.ts)).toEqual(
      report.turns.map((t: { timestamp: string }) => Date.parse(t.timestamp)),
    );
    expect(stored[0].metadata).toMatchObject({ timestamp: "2026-11-28T09:14:02.511Z" });
    const again = await cli([...args, "--table", table]);
    expect(again.stdout).toMatch(/; 0 stored, 7 already there/);
    expect(again.stdout).toContain('user      "user", bytes 0..');
    expect(again.stdout).toMatch(/, body, 2026-11-28T09:14:02\.511Z\n/);
  });

  it("prints the input's warnings before the import's summary and in --json", async () => {
    const table = await historyTable();
    const file = join(dir, "truncated.jsonl");
    writeFileSync(file, '{"role":"user","content":"a"}\n{"role":"assistant","content":"b');

    const run = await cli(["import", file, "--conversation", "warned", "--table", table]);
    const json = await cli([
      "import",
      file,
      "--conversation",
      "warned",
      "--table",
      table,
      "--json",
    ]);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^warning: read as plain text, not JSONL: line 2 of 2 is not a JSONL message: unexpected end of input at column 33 .*\nimported "warned": 1 turn from /,
    );
    expect(JSON.parse(json.stdout).input.fallback).toMatchObject({ line: 2, badLines: 1 });
  });

  it.each([
    ["an ELF executable", Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0])],
    ["UTF-16 text", Uint8Array.from([0xff, 0xfe, 0x55, 0, 0x3a, 0, 0x0a, 0])],
    ["Latin-1 text", Uint8Array.from([0x55, 0x73, 0x65, 0x72, 0x3a, 0x20, 0xe9, 0x0a])],
    ["a whitespace-only file", Uint8Array.from([0x20, 0x0a, 0x09, 0x0a])],
  ])("stores nothing of %s, and exits 1", async (_what, content) => {
    const table = await historyTable();
    const file = join(dir, `refused-${tables}`);
    writeFileSync(file, content);

    const run = await cli(["import", file, "--conversation", "refused", "--table", table]);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain("nothing was written");
    expect(await new DynamoDbStore({ client, tableName: table }).read("refused")).toEqual([]);
  });

  it("extracts the imported conversation and prints its topics", async () => {
    const run = await cli([
      "import",
      "examples/agent-session.txt",
      "--conversation",
      "demo",
      "--extract",
    ]);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^imported "demo": 7 turns from \d+ segments? \(plain, \d+ merged\); 7 stored, 0 already there/,
    );
    expect(run.stdout).toMatch(
      /extracted \(keyphrase-extractor \(offline, no LLM\), prompt keyphrases-4\): extracted, \d+ candidates?/,
    );
    expect(run.stdout).toMatch(/"demo": \d+ topics?, most supported first\n- \S/);
  }, 60_000);

  it.each([
    [
      "a transcript over the size cap",
      "x".repeat(MAX_TRANSCRIPT_BYTES + 1),
      /8388608|8 MiB|MAX_TRANSCRIPT_BYTES/,
    ],
    [
      "a fenced block over the fragment cap",
      `User: see\n\`\`\`\n${"x".repeat(MAX_FRAGMENT_BYTES)}\n\`\`\`\n`,
      /fenced code block of \d+ bytes exceeds the cap of 1048576 bytes/,
    ],
    [
      "more turns than the fragment count cap",
      "User: a\nAssistant: b\n".repeat(MAX_FRAGMENTS),
      /segmented into 2048 fragments, exceeding the cap of 1024/,
    ],
    ["a malformed JSONL line", '{"role":"user","content":"a"}\n{"content":"no role"}\n', /line 2/],
  ])("refuses %s, naming why, and writes nothing", async (_what, text, message) => {
    const table = await historyTable();
    const file = join(dir, `bad-${tables}.txt`);
    writeFileSync(file, text);

    const run = await cli([
      "import",
      file,
      "--conversation",
      "bad",
      "--table",
      table,
      "--format",
      _what.includes("JSONL") ? "jsonl" : "auto",
    ]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain("nothing was written");
    expect(await new DynamoDbStore({ client, tableName: table }).read("bad")).toEqual([]);
  });

  it.each([
    [["examples/agent-session.txt"], /--conversation ID is required/],
    [
      ["examples/agent-session.txt", "--conversation", "c", "--format", "xml"],
      /--format must be auto, plain or jsonl/,
    ],
    [
      ["examples/agent-session.txt", "--conversation", "c", "--extract", "--llm-endpoint", "x:1"],
      /--llm-endpoint must be an http\(s\) URL/,
    ],
    [
      ["examples/agent-session.txt", "--conversation", "c", "--model", "m"],
      /--model needs --extract/,
    ],
    [
      ["examples/agent-session.txt", "--conversation", "c", "--dry-run", "--extract"],
      /--dry-run writes nothing/,
    ],
  ])("rejects %j with usage", async (args, message) => {
    const { code, stderr } = await cli(["import", ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
