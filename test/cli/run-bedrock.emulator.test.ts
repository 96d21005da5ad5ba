import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sampleChat } from "../../local/sample.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import {
  closedAfterEach,
  converseError,
  converseToolUse,
  startConverseServer,
} from "../support/llm-servers.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-run-bedrock-"));
const startServer = closedAfterEach(startConverseServer);

describe("run command with Bedrock", () => {
  it("extracts through Converse at --llm-endpoint with the forced tool, after a throttled first call", async () => {
    stubLocalAws();
    const server = await startServer((_request, index) =>
      index === 0
        ? converseError(429, "ThrottlingException")
        : converseToolUse(
            "reply",
            {
              candidates: [
                {
                  topic: "printer setup",
                  reason: "asked",
                  confidence: 0.7,
                  tags: [],
                  turn_range: [1, 1],
                  subjective: false,
                  wiki_worthy: null,
                },
              ],
            },
            { inputTokens: 40, outputTokens: 6, cacheReadInputTokens: 4 },
          ),
    );
    const input = join(dir, "chat.jsonl");
    writeFileSync(
      input,
      sampleChat({ seed: 3, channels: ["c"], perChannel: 20, settle: 3_600_000, topical: true })
        .map((m) => JSON.stringify(m))
        .join("\n"),
    );
    const candidates = join(dir, "candidates.jsonl");

    const run = await runCli(
      [
        "run",
        "--input",
        input,
        "--settle",
        "1h",
        "--tick",
        "15m",
        "--out",
        join(dir, "segments.jsonl"),
        "--candidates",
        candidates,
        "--extractor",
        "bedrock",
        "--llm-endpoint",
        server.url,
        "--model",
        "amazon.nova-lite-v1:0",
      ],
      Date.UTC(2100, 0, 1),
    );

    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(candidates, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(0);
    expect(server.requests[1].path).toBe("/model/amazon.nova-lite-v1%3A0/converse");
    const body = server.requests[1].body as { toolConfig: { toolChoice: unknown } };
    expect(body.toolConfig.toolChoice).toEqual({ tool: { name: "reply" } });
    for (const line of lines) {
      expect(line.model).toBe("amazon.nova-lite-v1:0");
      expect(line.candidates[0]).toMatchObject({ topic: "printer setup" });
      expect(line.candidates[0].messageIds[0]).toBe(line.candidates[0].messageIds[1]);
      expect(line.usage.cacheReadTokens).toBe(4 * line.usage.calls);
    }
  }, 120_000);
});
