/**
 * Hybrid ranking in the deployed index (`LanceChannelIndexes` with an embedder), on a scripted
 * Bedrock runtime answering Titan's InvokeModel with the bench's hashing model ("gpu" read as
 * "graphics"): a write gives each document a vector, bounded and reusing what the table holds;
 * a search fuses the keyword and vector rankings across channels; a table written before the
 * model was set is searched by its words; another model, and a failing one, are SearchErrors.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BedrockTitanEmbedder } from "convoseg/extraction/llm";
import { type SearchDocument, SearchError } from "convoseg/search";
import { LanceChannelIndexes } from "convoseg/search/lancedb";
import { describe, expect, it } from "vitest";
import { hashingEmbedding } from "../../../bench/search/embed-server.js";
import {
  closedAfterEach,
  type RecordedRequest,
  startInvokeModelServer,
  testBedrockClient,
} from "../../support/llm-servers.js";
import { doc } from "./fixtures.js";

const titan = closedAfterEach(startInvokeModelServer);

const TITAN = "amazon.titan-embed-text-v2:0";

/** Titan's answer from the hashing model, "gpu" a synonym of "graphics". */
const hashing = (request: RecordedRequest) => {
  const { inputText } = request.body as { inputText: string };
  const embedding = hashingEmbedding(inputText.replace(/\bgpu\b/gi, "graphics"));
  return { body: { embedding, inputTextTokenCount: 3 } };
};

/** The texts the server was asked to embed. */
const asked = (requests: RecordedRequest[]) =>
  requests.map((r) => (r.body as { inputText: string }).inputText);

const embedderAt = (url: string, modelId = TITAN) =>
  new BedrockTitanEmbedder({ modelId, client: testBedrockClient(url) });

const inSegment = (channel: string, segment: string) => (d: SearchDocument) => ({
  ...d,
  channel,
  segment,
  id: `${channel}:${d.id}`,
});

const UBUNTU: SearchDocument[] = [
  doc({ id: "m1", text: "how do I install the nvidia drivers on hardy?" }),
  doc({ id: "m2", text: "grub: error: unknown filesystem (hd0)" }),
  doc({
    id: "q1",
    kind: "question",
    title: "how to install nvidia drivers",
    text: "how to install nvidia drivers\nwith the restricted drivers manager",
  }),
].map(inSegment("ubuntu", "s1"));
const KERNEL: SearchDocument[] = [
  doc({ id: "m3", text: "my graphics card shows a black screen after boot" }),
  doc({ id: "m4", text: "wifi drops every minute" }),
].map(inSegment("kernel", "k1"));

const tempIndex = () => join(mkdtempSync(join(tmpdir(), "convoseg-channels-hybrid-")), "index");

describe("the deployed index with an embeddings model", () => {
  it("gives each document a vector and fuses the keyword and vector rankings across channels", async () => {
    const server = await titan(hashing);
    const dir = tempIndex();
    const index = new LanceChannelIndexes(dir, { embedder: embedderAt(server.url) });
    const words = new LanceChannelIndexes(dir);
    try {
      await index.replaceSegment("ubuntu", "s1", UBUNTU);
      await index.replaceSegment("kernel", "k1", KERNEL);
      expect(asked(server.requests)).toHaveLength(5);
      // The words alone miss the graphics card; the fused ranking finds it, after both words hits.
      const keyword = await words.search({ text: "gpu nvidia" });
      expect(keyword.map((h) => h.id).sort()).toEqual(["ubuntu:m1", "ubuntu:q1"]);
      const before = server.requests.length;
      const hybrid = await index.search({ text: "gpu nvidia" });
      // The query is embedded once, whatever the number of tables.
      expect(server.requests.length - before).toBe(1);
      expect(hybrid.slice(0, 3).map((h) => h.id)).toEqual(
        expect.arrayContaining(["ubuntu:m1", "ubuntu:q1", "kernel:m3"]),
      );
      expect(hybrid[2]?.id).toBe("kernel:m3");
      expect(hybrid[0]?.score).toBeGreaterThan(1 / 61);
      expect(hybrid.every((h, i) => i === 0 || (hybrid[i - 1]?.score ?? 0) >= h.score)).toBe(true);
      // Paged and filtered alike.
      const [second] = await index.search({ text: "gpu nvidia", limit: 1, offset: 1 });
      expect(second?.id).toBe(hybrid[1]?.id);
      const kernel = await index.search({ text: "gpu nvidia", channels: ["kernel"] });
      expect(kernel[0]?.id).toBe("kernel:m3");

      // Written again (a redaction, a retry): only the changed words are embedded.
      const edited = UBUNTU.map((d) =>
        d.id === "ubuntu:m2" ? { ...d, text: "grub rescue prompt after an update" } : d,
      );
      const was = server.requests.length;
      await index.replaceSegment("ubuntu", "s1", edited);
      expect(asked(server.requests.slice(was))).toEqual(["grub rescue prompt after an update"]);
      // An erasure's purge keeps the vectors and their model.
      await index.purge("ubuntu");
      expect((await index.search({ text: "gpu nvidia" }))[2]?.id).toBe("kernel:m3");
    } finally {
      index.close();
      words.close();
    }
  });

  it("embeds at most its bound a write, what was learned first; the rest is found by its words", async () => {
    const server = await titan(hashing);
    const index = new LanceChannelIndexes(tempIndex(), {
      embedder: embedderAt(server.url),
      maxEmbeddedPerWrite: 2,
    });
    try {
      const conversation = doc({
        id: "c1",
        kind: "conversation",
        text: "nvidia drivers on hardy\nthe restricted drivers manager",
      });
      const documents = [...UBUNTU, inSegment("ubuntu", "s1")(conversation)];
      await index.replaceSegment("ubuntu", "s1", documents);
      // The conversation and the question, not the messages.
      expect(asked(server.requests).sort()).toEqual(
        [conversation.text, UBUNTU.find((d) => d.kind === "question")?.text].sort(),
      );
      // Written again, the next two are embedded: the bound is per write.
      await index.replaceSegment("ubuntu", "s1", documents);
      expect(asked(server.requests.slice(2)).sort()).toEqual(
        [UBUNTU[0]?.text, UBUNTU[1]?.text].sort(),
      );
      // A message without a vector is found by its words.
      await index.replaceSegment("ubuntu", "s2", [
        inSegment("ubuntu", "s2")(doc({ id: "m9", text: "grub filesystem unknown again" })),
        inSegment("ubuntu", "s2")(doc({ id: "c9", kind: "conversation", text: "grub talk" })),
        inSegment("ubuntu", "s2")(doc({ id: "q9", kind: "question", text: "grub?" })),
      ]);
      const hits = await index.search({ text: "unknown filesystem" });
      expect(
        hits
          .slice(0, 2)
          .map((h) => h.id)
          .sort(),
      ).toEqual(["ubuntu:m2", "ubuntu:m9"]);
    } finally {
      index.close();
    }
  });

  it("searches by its words a table written before the model was set, and writes it so", async () => {
    const server = await titan(hashing);
    const dir = tempIndex();
    const before = new LanceChannelIndexes(dir);
    await before.replaceSegment("ubuntu", "s1", UBUNTU);
    before.close();
    const index = new LanceChannelIndexes(dir, { embedder: embedderAt(server.url) });
    try {
      await index.replaceSegment("kernel", "k1", KERNEL);
      expect(asked(server.requests).sort()).toEqual(KERNEL.map((d) => d.text).sort());
      // The old table's documents get no vectors, and are found by their words.
      await index.replaceSegment("ubuntu", "s1", UBUNTU);
      expect(server.requests).toHaveLength(2);
      const hits = await index.search({ text: "gpu nvidia" });
      expect(hits.map((h) => h.id)).toEqual(
        expect.arrayContaining(["ubuntu:m1", "ubuntu:q1", "kernel:m3"]),
      );
      // A table with vectors written without the model: its new documents have none.
      const keywords = new LanceChannelIndexes(dir);
      await keywords.replaceSegment("kernel", "k2", [
        inSegment("kernel", "k2")(doc({ id: "m5", text: "sound card crackles" })),
      ]);
      keywords.close();
      expect((await index.search({ text: "crackles" }))[0]?.id).toBe("kernel:m5");
    } finally {
      index.close();
    }
  });

  it("names both models when the table's vectors are another's, and fails a write the model fails", async () => {
    const server = await titan(hashing);
    const dir = tempIndex();
    const first = new LanceChannelIndexes(dir, { embedder: embedderAt(server.url) });
    await first.replaceSegment("kernel", "k1", KERNEL);
    first.close();
    const other = new LanceChannelIndexes(dir, {
      embedder: embedderAt(server.url, "amazon.titan-embed-text-v1"),
    });
    try {
      for (const call of [
        () => other.replaceSegment("kernel", "k1", KERNEL),
        () => other.search({ text: "wifi" }),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SearchError);
        expect((error as SearchError).code).toBe("SEARCH_MODEL_MISMATCH");
        expect((error as SearchError).message).toMatch(
          /titan-embed-text-v2:0.*titan-embed-text-v1/,
        );
      }
    } finally {
      other.close();
    }
    // A model that fails fails the write (the queue delivers it again); nothing is written.
    const down = await titan(() => ({ status: 400, body: { message: "bad model" } }));
    const failing = new LanceChannelIndexes(dir, { embedder: embedderAt(down.url) });
    try {
      const error = await failing.replaceSegment("ubuntu", "s1", UBUNTU).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SearchError);
      expect((error as SearchError).code).toBe("SEARCH_EMBEDDING_FAILED");
      expect(await new LanceChannelIndexes(dir).search({ text: "nvidia" })).toEqual([]);
    } finally {
      failing.close();
    }
  });
});
