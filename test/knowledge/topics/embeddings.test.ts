import { KnowledgeReader } from "convoseg/knowledge/read";
import type { ResultStore, TopicSupport } from "convoseg/knowledge/store";
import {
  type Embedder,
  EmbeddingError,
  embeddingMatcher,
  embedTopics,
  mergeTopics,
  tokenMatcher,
} from "convoseg/topics";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** Vectors on a circle: the cosine of two is the cosine of their angle's difference. */
const at = (degrees: number): number[] => [
  Math.cos((degrees * Math.PI) / 180),
  Math.sin((degrees * Math.PI) / 180),
];

/** A pure double of the port: vectors from a table, recording what was asked. */
function tableEmbedder(table: Record<string, number[]>): Embedder & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    model: "table",
    asked,
    embed: async (texts) => {
      asked.push([...texts]);
      return texts.map((t) => table[t] ?? [1, 0]);
    },
  };
}

const links = (matcher: ReturnType<typeof embeddingMatcher>, topics: string[]) =>
  [...matcher(topics)].map(([a, b]) => [a, b].sort().join(" + ")).sort();

describe("embeddingMatcher", () => {
  it("links the pairs at or above the similarity, and no others", () => {
    // cos 20° = 0.94, cos 40° = 0.77, cos 60° = 0.5.
    const vectors = new Map([
      ["grub bootloader", at(0)],
      ["boot manager", at(20)],
      ["kernel panic", at(60)],
    ]);
    const topics = [...vectors.keys()];
    expect(links(embeddingMatcher(vectors, 0.9), topics)).toEqual([
      "boot manager + grub bootloader",
    ]);
    expect(links(embeddingMatcher(vectors, 0.7), topics)).toEqual([
      "boot manager + grub bootloader",
      "boot manager + kernel panic",
    ]);
    expect(links(embeddingMatcher(vectors, 0.95), topics)).toEqual([]);
  });

  it("is the same for vectors of any length: cosine, not distance", () => {
    const vectors = new Map([
      ["a", [3, 0]],
      ["b", [0.001, 0]],
    ]);
    expect(links(embeddingMatcher(vectors, 0.99), ["a", "b"])).toEqual(["a + b"]);
  });

  it("links nothing for a topic it has no vector of", () => {
    const matcher = embeddingMatcher(new Map([["a", at(0)]]), 0.5);
    expect(links(matcher, ["a", "b"])).toEqual([]);
  });

  it("refuses a bad similarity, and vectors of mixed length or zero, naming no topic", () => {
    expect(() => embeddingMatcher(new Map(), 0)).toThrow(/similarity must be above 0/);
    expect(() => embeddingMatcher(new Map(), 1.5)).toThrow(EmbeddingError);
    const mixed = new Map([
      ["secret topic", [1, 0]],
      ["other", [1, 0, 0]],
    ]);
    expect(() => embeddingMatcher(mixed)).toThrow(/vector 1 has 3 dimensions, not 2/);
    expect(() => embeddingMatcher(new Map([["secret topic", [0, 0]]]))).toThrow(
      /vector 0 is not a finite non-zero vector/,
    );
    expect(() => embeddingMatcher(mixed)).not.toThrow(/secret/);
  });

  it("merges the same whatever the order of the topics (property)", () => {
    const names = ["a", "b", "c", "d", "e", "f"];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 359 }), { minLength: 6, maxLength: 6 }),
        fc.shuffledSubarray(names, { minLength: 6, maxLength: 6 }),
        (angles, order) => {
          const vectors = new Map(names.map((n, i) => [n, at(angles[i])]));
          const matchers = [tokenMatcher, embeddingMatcher(vectors, 0.9)];
          const merged = (list: string[]) =>
            mergeTopics(
              list.map((topic) => ({ topic, segments: [topic], firstSeen: 0, lastSeen: 0 })),
              matchers,
            ).map((t) => t.aliases.map((a) => a.topic).sort());
          expect(merged(order)).toEqual(merged(names));
        },
      ),
    );
  });
});

describe("embedTopics", () => {
  it("asks in batches for what the cache lacks, up to maxTopics, the first ones first", async () => {
    const embedder = tableEmbedder({});
    const cache = new Map([["b", [0, 1]]]);
    const vectors = await embedTopics(embedder, ["a", "b", "c", "d", "a", "e"], {
      batch: 2,
      maxTopics: 4,
      cache,
    });
    expect([...vectors.keys()]).toEqual(["a", "b", "c", "d"]);
    expect(vectors.get("b")).toEqual([0, 1]);
    expect(embedder.asked).toEqual([["a", "c"], ["d"]]);
    await embedTopics(embedder, ["a", "d"], { cache });
    expect(embedder.asked).toHaveLength(2);
  });

  it("fails when the model answers another number of vectors", async () => {
    const embedder: Embedder = { model: "short", embed: async () => [[1, 0]] };
    await expect(embedTopics(embedder, ["a", "b"])).rejects.toThrow(
      /short returned 1 vectors for 2 topics/,
    );
  });
});

describe("KnowledgeReader with embeddings", () => {
  const support = (topic: string, segmentId: string, firstTs: number): TopicSupport => ({
    v: 1,
    channel: "c",
    topic,
    normalizedTopic: topic.toLowerCase(),
    segmentId,
    candidateId: `${segmentId}-${topic}`,
    late: false,
    confidence: 0.8,
    reason: "r",
    tags: [],
    messageIds: null,
    firstTs,
    lastTs: firstTs,
  });

  it("merges topics the tokens keep apart when their vectors are close, keeping every alias's evidence", async () => {
    const supports = [
      support("grub bootloader", "s1", 1),
      support("GRUB boot loader", "s2", 2),
      support("boot manager", "s3", 3),
      support("kernel panic", "s4", 4),
    ];
    // The reader reads topics through listSupports alone.
    const store = { listSupports: async () => supports } as Partial<ResultStore> as ResultStore;
    const table = {
      "grub bootloader": at(0),
      "GRUB boot loader": at(1),
      "boot manager": at(15),
      "kernel panic": at(80),
    };
    const tokensOnly = await new KnowledgeReader({ store }).topics("c");
    expect(tokensOnly).toHaveLength(3);
    const embedder = tableEmbedder(table);
    const reader = new KnowledgeReader({ store, embeddings: { embedder, similarity: 0.9 } });
    const [boot, kernel] = await reader.topics("c");
    expect(boot.topic).toBe("grub bootloader");
    expect([...boot.aliases].sort()).toEqual(["GRUB boot loader", "boot manager"]);
    expect(boot.evidence.map((e) => e.segmentId)).toEqual(["s1", "s2", "s3"]);
    expect(kernel.topic).toBe("kernel panic");
    // A second read asks the model for nothing new.
    await reader.topics("c");
    expect(embedder.asked.flat().sort()).toEqual(Object.keys(table).sort());
  });
});
