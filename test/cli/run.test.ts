import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it, vi } from "vitest";
import { sampleChat } from "../../local/sample.js";
import { runCli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-run-"));

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

/** Segment message-id groups per channel, in output order. */
function groups(jsonLines: string): Map<string, string[][]> {
  const byChannel = new Map<string, string[][]>();
  for (const line of jsonLines.trim().split("\n")) {
    const { channel, messageIds } = JSON.parse(line) as { channel: string; messageIds: string[] };
    byChannel.set(channel, [...(byChannel.get(channel) ?? []), messageIds]);
  }
  return byChannel;
}

describe("run command", () => {
  it.each([
    [1, 1],
    [3, 1],
    [1, 3],
  ])(
    "delivers the same segments as one segment call over the same input (minItems %i, %i workers)",
    async (minItems, workers) => {
      // The emulators of the test setup, as a user's own would be used.
      vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
      vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
      const input = join(dir, `chat-${minItems}-${workers}.jsonl`);
      const settle = 6 * 3_600_000;
      const chat = sampleChat({ seed: minItems, channels: ["a", "b"], perChannel: 60, settle });
      writeFileSync(input, chat.map((m) => JSON.stringify(m)).join("\n"));
      const out = join(dir, `segments-${minItems}-${workers}.jsonl`);
      const options = ["--max-size", "7", "--min-items", String(minItems), "--settle", "6h"];
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
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/channels 2, messages 120, segments \d+ \(late 0\)/);
      const segment = await cli(["segment", input, "--json", ...options]);
      expect(segment.code).toBe(0);
      const delivered = groups(readFileSync(out, "utf8"));
      expect([...delivered.values()].flat().length).toBeGreaterThan(10);
      expect(delivered).toEqual(groups(segment.stdout));
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
    const skipped = await cli(["run", "--input", input, "--skip-invalid"]);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/skipped line 3: text: takes \d+ bytes/);
    expect(skipped.stderr).toContain("not stored 0");
    expect(
      skipped.stdout
        .trim()
        .split("\n")
        .flatMap((l) => JSON.parse(l).messageIds),
    ).toEqual(["m0", "m1", "m3", "m4"]);
  }, 60_000);
});
