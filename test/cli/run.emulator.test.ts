import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it, vi } from "vitest";
import { sampleChat } from "../../local/sample.js";
import { runCli } from "../support/cli.js";
import { closedPort } from "../support/llm-servers.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-run-"));

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

/**
 * Segment message-id groups per stream (channel, and thread or null, and the linked conversation
 * when there is one), in output order.
 */
function groups(jsonLines: string): Map<string, string[][]> {
  const byStream = new Map<string, string[][]>();
  for (const line of jsonLines.trim().split("\n")) {
    const { channel, thread, conversation, messageIds } = JSON.parse(line) as {
      channel: string;
      thread: string | null;
      conversation?: string | null;
      messageIds: string[];
    };
    const stream = `${channel} ${thread} ${conversation ?? null}`;
    byStream.set(stream, [...(byStream.get(stream) ?? []), messageIds]);
  }
  return byStream;
}

/**
 * The sample with threads and replies: every fifth message a reply in the thread of the
 * channel's message ten before (outside any thread), every third one answering the one before.
 */
function threaded<T extends { id: string; channel?: string }>(chat: T[]): T[] {
  const inThread = new Set<string>();
  return chat.map((m, i) => {
    const same = chat.slice(0, i).filter((o) => o.channel === m.channel);
    const root = same.at(-10);
    const linked: T & { thread?: string; replyTo?: string } = { ...m };
    if (i % 5 === 4 && root !== undefined && !inThread.has(root.id)) {
      linked.thread = root.id;
      inThread.add(m.id);
    }
    const previous = same.at(-1);
    if (i % 3 === 2 && previous !== undefined) linked.replyTo = previous.id;
    return linked;
  });
}

describe("run command", () => {
  it.each([
    [1, 1, "contiguous"],
    [3, 1, "contiguous"],
    [1, 3, "contiguous"],
    [1, 1, "linked"],
    [3, 3, "linked"],
  ])(
    "delivers the same segments as one segment call over the same input, threads and replies too (minItems %i, %i workers, %s)",
    async (minItems, workers, conversations) => {
      // The emulators of the test setup, as a user's own would be used.
      vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
      vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
      const input = join(dir, `chat-${minItems}-${workers}-${conversations}.jsonl`);
      const settle = 6 * 3_600_000;
      const chat = threaded(
        sampleChat({ seed: minItems, channels: ["a", "b"], perChannel: 60, settle }),
      );
      writeFileSync(input, chat.map((m) => JSON.stringify(m)).join("\n"));
      const out = join(dir, `segments-${minItems}-${workers}-${conversations}.jsonl`);
      const options = [
        ...["--max-size", "7", "--min-items", String(minItems), "--settle", "6h"],
        ...["--conversations", conversations],
      ];
      const fanOut = ["--workers", String(workers)];
      const run = await cli([
        "run",
        "--input",
        input,
        "--out",
        out,
        "--tick",
        "15m",
        ...options,
        ...fanOut,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        conversations === "linked"
          ? /^120 messages in 2 channels, \d+ conversations in \d+ segments, /m
          : /^120 messages in 2 channels, \d+ segments \(conversations\), /m,
      );
      // The segments go to --out, and only there.
      expect(run.stdout).not.toContain("messageIds");
      const segment = await cli(["segment", input, "--json", ...options]);
      expect(segment.code).toBe(0);
      const delivered = groups(readFileSync(out, "utf8"));
      expect([...delivered.values()].flat().length).toBeGreaterThan(10);
      // Linked, the tick and segment link in the same order, so each conversation's segments agree;
      // the streams are listed in another order.
      const sorted = (g: Map<string, string[][]>) =>
        new Map([...g].sort(([a], [b]) => (a < b ? -1 : 1)));
      expect(sorted(delivered)).toEqual(sorted(groups(segment.stdout)));
      // Threads of a few replies each: below minItems 3, theirs are dropped in both.
      if (minItems === 1)
        expect([...delivered.keys()].some((k) => k.split(" ")[1] !== "null")).toBe(true);
    },
    120_000,
  );

  it.each([
    [["--tick", "soon"], /--tick must be a duration/],
    [["--settle", "9007199254740991"], /--settle must be at most 365 days/],
    [["--grace", "400d"], /--grace must be at most 365 days/],
    [["--workers", "0"], /--workers must be a positive integer \(got "0"\)/],
    [["--workers", "1001"], /--workers must be at most 1000 \(got 1001\)/],
  ])("rejects %j with usage", async (args, message) => {
    const { code, stderr } = await cli(["run", ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("says cleanly that an input file cannot be read", async () => {
    const { code, stderr } = await cli(["run", "--input", join(dir, "missing.jsonl")]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^run: cannot read .*missing\.jsonl: ENOENT/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses what ingestion would refuse, naming the line, unless --skip-invalid", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const t = Date.UTC(2025, 0, 6);
    const lines = Array.from({ length: 5 }, (_, i) => ({
      id: `m${i}`,
      ts: t + i * 60_000,
      channel: "c",
      text: i === 2 ? "x".repeat(500 * 1024) : `message ${i}`,
    }));
    const input = join(dir, "oversized.jsonl");
    writeFileSync(input, lines.map((m) => JSON.stringify(m)).join("\n"));
    const refused = await cli(["run", "--input", input]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/line 3: text: takes \d+ bytes as an item/);
    expect(refused.stderr).toContain("nothing was run");
    const out = join(dir, "skipped-segments.jsonl");
    const skipped = await cli([
      "run",
      "--input",
      input,
      "--skip-invalid",
      "--verbose",
      "--out",
      out,
    ]);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/skipped line 3: text: takes \d+ bytes/);
    expect(skipped.stderr).toContain("run: 1 invalid line skipped (--skip-invalid; listed above)");
    expect(skipped.stdout).toContain("messages not stored 0");
    expect(
      readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .flatMap((l) => JSON.parse(l).messageIds),
    ).toEqual(["m0", "m1", "m3", "m4"]);
  }, 60_000);

  it("says what was learned and what to try next; the segments are written only when asked", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const input = join(dir, "learned.jsonl");
    const chat = sampleChat({
      seed: 5,
      channels: ["#help desk"],
      perChannel: 40,
      settle: 3_600_000,
      topical: true,
    });
    writeFileSync(input, chat.map((m) => JSON.stringify(m)).join("\n"));

    const run = await cli(["run", "--input", input, "--settle", "1h", "--tick", "15m"]);

    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toBe(
      "What was talked about, by channel (offline keyphrase extractor, no LLM):",
    );
    // Linked by default: the conversations the linker found, and the segments they took.
    expect(lines[2]).toMatch(
      /^#help desk: 40 messages in \d+ conversations? \(\d+ segments?\), \d{4}-\d\d-\d\d \d\d:\d\d(–| to ).* UTC$/,
    );
    // A topic, the conversations that support it, and when.
    expect(lines[3]).toMatch(/^ {2}\S.*\s\d+ conversations?\s+\d{4}-\d\d-\d\d/);
    expect(run.stdout).toMatch(
      /^40 messages in 1 channel, \d+ conversations? in (\d+) segments, \1 of \1 extracted; \d+ s\.$/m,
    );
    expect(run.stdout).toMatch(
      /^Next:\n {2}npm start -- topics '#help desk' +every topic of #help desk, .*\n( {2}npm start -- questions '#help desk' --status unanswered .*\n)? {2}npm start -- report --open +the report in a browser/m,
    );
    expect(run.stdout).not.toMatch(/ticks|items read/);
    expect(run.stdout).not.toContain("segmentId");
  }, 60_000);

  it("says in one line which emulator endpoint it cannot reach", async () => {
    const closed = await closedPort();
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", `http://127.0.0.1:${closed}`);
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const dynamodb = await cli(["run", "--extractor", "none"]);
    expect(dynamodb.code).toBe(1);
    expect(dynamodb.stderr).toBe(
      `run: cannot reach DynamoDB at http://127.0.0.1:${closed} (ECONNREFUSED): is AWS_ENDPOINT_URL_DYNAMODB right, and the emulator there running? (Unset it and run starts its own.)\n`,
    );
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", `http://127.0.0.1:${closed}`);
    const sqs = await cli(["run", "--extractor", "none"]);
    expect(sqs.code).toBe(1);
    expect(sqs.stderr).toMatch(
      new RegExp(
        `^run: cannot reach SQS at http://127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\): is AWS_ENDPOINT_URL_SQS right`,
      ),
    );
    expect(sqs.stderr.trim().split("\n")).toHaveLength(1);
  }, 60_000);

  it("checks that the files it writes can be written before it runs", async () => {
    const out = join(dir, "no-such-dir", "segments.jsonl");
    const run = await cli(["run", "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^run: cannot write --out .*no-such-dir\/segments\.jsonl: ENOENT/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
