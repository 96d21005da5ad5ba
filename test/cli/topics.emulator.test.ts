import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Extractor } from "convoseg/extraction";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import type { Topic } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it, vi } from "vitest";
import { CHAT_ANALYSIS, createResultsTestTable, segmentOf } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { closedAfterEach, startEmbeddingsServer } from "../support/llm-servers.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2026, 0, 1));
const embeddingsServer = closedAfterEach(startEmbeddingsServer);

/** Extracts one topic per segment: its first message's text, as a model might word it. */
function namingExtractor(client: DynamoDBClient, tableName: string): SegmentExtractor {
  const said: Extractor = {
    extract: async (turns) => ({
      candidates: [
        {
          topic: turns[0].text,
          reason: "named",
          confidence: 0.5,
          tags: [],
          turnRange: [0, 0],
          subjective: false,
        },
      ],
    }),
  };
  return new SegmentExtractor({
    store: new DynamoDbResultStore({ client, tableName }),
    extractor: said,
    model: "scripted",
    promptVersion: "test",
  });
}

describe("topics command", () => {
  it("lists a channel's topics, most supported first, with their evidence; --json as the reader", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const tableName = await createResultsTestTable(client);
    const extractor = new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    });
    const talks = [
      [
        "my grub bootloader is broken",
        "reinstall the grub bootloader",
        "the grub bootloader works",
      ],
      ["the grub bootloader again", "which grub bootloader version", "grub bootloader fixed"],
      ["the wifi driver drops", "update the wifi driver", "wifi driver ok <script>x</script>"],
    ];
    for (const [i, texts] of talks.entries()) {
      const { segment, messages } = segmentOf(`s${i}`, texts, "desk");
      await extractor.extract(segment, messages);
    }

    const text = await cli(["topics", "desk", "--table", tableName]);
    const json = await cli(["topics", "desk", "--table", tableName, "--json", "--limit", "1"]);

    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toMatch(/^"desk": \d+ topics?, most supported first$/);
    expect(lines[1]).toMatch(
      /^- grub bootloader: 2 segments, 2026-01-01T00:00Z to 2026-01-01T00:02Z/,
    );
    expect(text.stdout).toMatch(/segment s0: messages s0-m0 to s0-m\d/);
    expect(text.stdout).toMatch(/segment s1: messages s1-m\d to s1-m\d/);
    expect(text.stdout).toMatch(/- wifi driver: 1 segment/);
    const parsed = JSON.parse(json.stdout) as { channel: string; topics: Topic[] };
    expect(parsed.channel).toBe("desk");
    expect(parsed.topics).toHaveLength(1);
    expect(parsed.topics[0]).toMatchObject({ normalizedTopic: "grub bootloader", segments: 2 });
    expect(parsed.topics[0].evidence.map((e) => e.segmentId)).toEqual(["s0", "s1"]);
  });

  it("shows the wordings of one topic as one, with its aliases ('also:', JSON aliases)", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const tableName = await createResultsTestTable(client);
    // Each segment's first message names its topic: the wordings a model might give.
    const extractor = namingExtractor(client, tableName);
    const wordings = ["grub bootloader", "GRUB boot-loader", "grub bootloader", "dnssec", "dns"];
    for (const [i, topic] of wordings.entries()) {
      const { segment, messages } = segmentOf(`s${i}`, [topic, "ok"], "merge");
      await extractor.extract(segment, messages);
    }

    const text = await cli(["topics", "merge", "--table", tableName]);
    const json = await cli(["topics", "merge", "--table", tableName, "--json"]);

    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe(`"merge": 3 topics, most supported first`);
    expect(lines[1]).toMatch(/^- grub bootloader: 3 segments/);
    expect(lines[2]).toBe("    also: GRUB boot-loader");
    expect(text.stdout).toContain("segment s1: messages s1-m0 to s1-m0 (GRUB boot-loader)");
    const parsed = JSON.parse(json.stdout) as { topics: Topic[] };
    expect(parsed.topics.map((t) => [t.topic, t.aliases, t.segments])).toEqual([
      ["grub bootloader", ["GRUB boot-loader"], 3],
      ["dns", [], 1],
      ["dnssec", [], 1],
    ]);
    expect(parsed.topics[0].evidence.map((e) => [e.segmentId, e.topic])).toEqual([
      ["s0", "grub bootloader"],
      ["s1", "GRUB boot-loader"],
      ["s2", "grub bootloader"],
    ]);
  });

  it("--embeddings merges topics the tokens keep apart, asking the embeddings endpoint", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const tableName = await createResultsTestTable(client);
    const extractor = namingExtractor(client, tableName);
    for (const [i, topic] of ["dns", "dnssec", "name resolution", "wifi"].entries()) {
      const { segment, messages } = segmentOf(`s${i}`, [topic, "ok"], "emb");
      await extractor.extract(segment, messages);
    }
    // Everything but wifi points one way.
    const vectors: Record<string, number[]> = { wifi: [0, 1] };
    const server = await embeddingsServer((request) => {
      const { input } = request.body as { input: string[] };
      return {
        body: {
          object: "list",
          data: input.map((t, index) => ({ index, embedding: vectors[t] ?? [1, 0.01] })),
        },
      };
    });
    vi.stubEnv("OPENAI_API_KEY", "test");
    const args = ["topics", "emb", "--table", tableName, "--json"];
    const flags = ["--embeddings", "openai:emb", "--embeddings-url", `${server.url}/v1`];

    const plain = await cli(args);
    const merged = await cli([...args, ...flags, "--similarity", "0.95"]);
    const refused = await cli([...args, "--similarity", "0.9"]);

    const topicsOf = (out: string) =>
      (JSON.parse(out) as { topics: Topic[] }).topics.map((t) => [t.topic, ...t.aliases].sort());
    expect(topicsOf(plain.stdout)).toHaveLength(4);
    expect(merged.code, merged.stderr).toBe(0);
    expect(topicsOf(merged.stdout)).toEqual([["dns", "dnssec", "name resolution"], ["wifi"]]);
    expect(server.requests).toHaveLength(1);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--similarity needs --embeddings");
  });

  it("says a channel with nothing stored apart from one with no topics yet, and suggests near ids", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const tableName = await createResultsTestTable(client);
    const extractor = new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    });
    for (const channel of ["desk\u200b", "quiet"]) {
      const texts = channel === "quiet" ? ["ok"] : ["the grub bootloader", "grub bootloader"];
      const { segment, messages } = segmentOf("s0", texts, channel);
      await extractor.extract(segment, messages);
    }

    const unknown = await cli(["topics", "desk", "--table", tableName]);
    const json = await cli(["topics", "desk", "--table", tableName, "--json"]);
    const far = await cli(["topics", "elsewhere", "--table", tableName]);

    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe(
      `topics: channel "desk" has nothing in the results table ${JSON.stringify(tableName)}: no stored messages, or none extracted yet\n` +
        "topics: did you mean (with the same options)\n  npm start -- topics $'desk\\u200b'\n",
    );
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ channel: "desk", topics: [] });
    expect(far.stderr).toMatch(/no stored channel is near it \(2 channels stored\)/);
    const quiet = await cli(["topics", "quiet", "--table", tableName]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
    const near = await cli(["topics", "desk\u200b", "--table", tableName]);
    expect(near.code, near.stderr).toBe(0);
    expect(near.stdout).toMatch(/^"desk\\u200b": \d+ topics?/);
  });

  it.each([
    [[], /expected one channel id/],
    [["desk", "--table", "t", "--workspace", "w"], /--workspace and --table name two places/],
    [["desk", "--table", "t", "--limit", "0"], /--limit must be a positive integer/],
  ])("rejects %j with usage", async (args, message) => {
    vi.stubEnv("RESULTS_TABLE", undefined);
    const { code, stderr } = await cli(["topics", ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
