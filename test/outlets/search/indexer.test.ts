/**
 * The search index following the stores, on memory stores: the consumer tells it each result,
 * the redactor each redacted segment, an erasure what to take out; a segment's documents cite
 * only messages still stored.
 */
import type { SQSEvent } from "aws-lambda";
import { type Message, textMessage } from "convoseg/history";
import type { Topic } from "convoseg/knowledge/read";
import { MemoryResultStore, type SegmentResult } from "convoseg/knowledge/store";
import { KnowledgeRedactor, segmentConsumer } from "convoseg/knowledge/write";
import {
  type SearchDocument,
  SearchIndexer,
  type SegmentIndex,
  segmentDocuments,
  storedChatMessages,
} from "convoseg/search";
import { describe, expect, it } from "vitest";
import { TEN_TEXTS } from "../../knowledge/fixtures.js";
import { extractorFor, FakeMessageStates, NOW, segmentAt } from "../../knowledge/redaction.js";

/** The index's writes on a map, as LanceChannelIndexes makes them on its tables. */
class MapIndex implements SegmentIndex {
  readonly docs = new Map<string, SearchDocument>();
  readonly calls: string[] = [];

  async replaceSegment(channel: string, segmentId: string, documents: readonly SearchDocument[]) {
    this.calls.push(`replace ${segmentId} ${documents.length}`);
    for (const [id, d] of this.docs)
      if (d.channel === channel && d.segment === segmentId && d.kind !== "topic")
        this.docs.delete(id);
    for (const d of documents) this.docs.set(d.id, d);
  }

  private remove(channel: string, match: (d: SearchDocument) => boolean) {
    const segments = new Set<string>();
    for (const [id, d] of this.docs)
      if (d.channel === channel && match(d)) {
        segments.add(d.segment);
        this.docs.delete(id);
      }
    return [...segments];
  }

  async forget(channel: string, ids: readonly string[], authors: readonly string[] = []) {
    this.calls.push(`forget ${ids.length} ${authors.length}`);
    return this.remove(
      channel,
      (d) => d.evidence.some((id) => ids.includes(id)) || authors.includes(d.author),
    );
  }

  async forgetNaming(channel: string, names: readonly string[]) {
    this.calls.push(`forgetNaming ${names.join(",")}`);
    return this.remove(
      channel,
      (d) => d.kind !== "message" && names.some((n) => d.text.toLowerCase().includes(n)),
    );
  }

  async purge(channel: string) {
    this.calls.push(`purge ${channel}`);
  }
}

const { segment, messages } = segmentAt("c", "s1", TEN_TEXTS, NOW);
const stored = (): Message[] =>
  messages.map((m) => textMessage("user", m.text, { id: m.id, ts: m.ts, author: m.author }));

function world() {
  const store = new MemoryResultStore();
  const states = new FakeMessageStates();
  states.add(messages);
  const index = new MapIndex();
  const inStore = new Map(stored().map((m) => [m.id as string, m]));
  const topics: Topic[] = [];
  const indexer = new SearchIndexer({
    index,
    results: store,
    messages: {
      getMessages: async (_channel, ids) => ids.flatMap((id) => inStore.get(id) ?? []),
    },
    topics: async () => topics,
  });
  return { store, states, index, inStore, indexer, topics };
}

function eventOf(): SQSEvent {
  const body = JSON.stringify({ v: 1, ...segment, messages });
  return { Records: [{ messageId: "r1", body, attributes: {}, messageAttributes: {} } as never] };
}

function consumerOf(w: ReturnType<typeof world>, indexed: SegmentIndexed) {
  const quiet = () => {};
  return segmentConsumer({
    extractor: extractorFor(w.store),
    messages: { getMessages: async () => [] },
    messagesTable: "messages",
    metrics: { add: () => {} },
    logger: { info: quiet, warn: quiet, error: quiet },
    current: {
      states: w.states,
      redactor: new KnowledgeRedactor({ store: w.store, states: w.states }),
    },
    indexed,
  });
}

type SegmentIndexed = (
  result: SegmentResult,
  messages?: readonly { id: string }[],
) => Promise<void>;

describe("the extraction consumer", () => {
  it("tells the index each result, again when delivered again, and without messages once they changed", async () => {
    const w = world();
    const told: (number | undefined)[] = [];
    const handler = consumerOf(w, async (result, given) => {
      told.push(given?.length);
      await w.indexer.stored(result, given as never);
    });
    await handler(eventOf());
    await handler(eventOf());
    expect(told).toEqual([10, 10]);
    expect([...w.index.docs.values()].filter((d) => d.kind === "message")).toHaveLength(10);
    expect(w.index.docs.get("conversation:c:s1")?.evidence).toHaveLength(10);

    // A deletion between the consumer's two reads: the documents are read from the store.
    const raced = world();
    const seen: (number | undefined)[] = [];
    raced.states.afterCall = async (call) => {
      if (call === 1) raced.states.delete("s1-m9");
    };
    await consumerOf(raced, async (result, given) => {
      seen.push(given?.length);
      raced.inStore.delete("s1-m9");
      await raced.indexer.stored(result, given as never);
    })(eventOf());
    expect(seen).toEqual([undefined]);
    expect(raced.index.docs.has("message:c:s1-m9")).toBe(false);
    expect(raced.index.docs.get("conversation:c:s1")?.evidence).not.toContain("s1-m9");
  });

  it("fails the record when the index cannot be written, and the retry writes it", async () => {
    const w = world();
    let fail = true;
    const handler = consumerOf(w, async (result, given) => {
      if (fail) throw new Error("index unavailable");
      await w.indexer.stored(result, given as never);
    });
    expect((await handler(eventOf())).batchItemFailures).toHaveLength(1);
    fail = false;
    expect((await handler(eventOf())).batchItemFailures).toEqual([]);
    expect(w.index.docs.size).toBeGreaterThan(10);
  });
});

describe("the redactor", () => {
  it("tells the index each segment redacted, with its result and the ids deleted", async () => {
    const w = world();
    await extractorFor(w.store).extract(segment, messages);
    const told: [string, boolean, readonly string[]][] = [];
    const redactor = new KnowledgeRedactor({
      store: w.store,
      states: w.states,
      onRedacted: async (_channel, segmentId, result, deleted) => {
        told.push([segmentId, result !== undefined, deleted]);
      },
    });
    await redactor.redact("c", [w.states.delete("s1-m0")]);
    expect(told).toEqual([["s1", true, ["s1-m0"]]]);
    await redactor.redactSegment("c", "gone", [{ id: "x", ts: NOW, kind: "delete" }]);
    expect(told[1]).toEqual(["gone", false, ["x"]]);
  });
});

describe("SearchIndexer", () => {
  it("writes a redacted segment again from the stores, and empties a removed one", async () => {
    const w = world();
    await extractorFor(w.store).extract(segment, messages);
    const result = await w.store.getResult("c", "s1");
    if (result === undefined) throw new Error("no result");
    await w.indexer.stored(result);
    w.topics.push({
      topic: "grub",
      normalizedTopic: "grub",
      aliases: [],
      bestReason: "",
      lastSeen: NOW,
      evidence: [{ segmentId: "s1", messageIds: ["s1-m0"] }],
    } as unknown as Topic);
    w.inStore.delete("s1-m0");
    await w.indexer.redacted("c", "s1", result, ["s1-m0"]);
    expect(w.index.docs.has("message:c:s1-m0")).toBe(false);
    expect(w.index.docs.get("message:c:s1-m1")).toBeDefined();
    expect(w.index.docs.get("topic:c:grub")?.evidence).toEqual(["s1-m0"]);
    await w.indexer.redacted("c", "s1", undefined, []);
    expect([...w.index.docs.values()].map((d) => d.kind)).toEqual(["topic"]);
  });

  it("takes out what an erasure names, writes its segments again and purges the channel", async () => {
    const w = world();
    await extractorFor(w.store).extract(segment, messages);
    const result = await w.store.getResult("c", "s1");
    if (result === undefined) throw new Error("no result");
    await w.indexer.stored(result);
    w.index.docs.set("message:c:loose", {
      ...(w.index.docs.get("message:c:s1-m1") as SearchDocument),
      id: "message:c:loose",
      segment: "",
      evidence: ["loose"],
    });
    const theirs = messages.filter((m) => m.author === messages[0].author).map((m) => m.id);
    for (const id of theirs) w.inStore.delete(id);
    w.index.calls.length = 0;
    await w.indexer.erased("c", [...theirs, "loose"], [messages[0].author as string]);
    expect(w.index.calls).toEqual([
      `forget ${theirs.length + 1} 1`,
      `forgetNaming ${messages[0].author}`,
      `replace s1 ${10 - theirs.length + 1}`,
      "purge c",
    ]);
    const cited = [...w.index.docs.values()].flatMap((d) => d.evidence);
    for (const id of theirs) expect(cited).not.toContain(id);
  });
});

describe("SearchIndexer with people's corrections", () => {
  it("indexes a result's questions as people corrected them: a hidden one is not found", async () => {
    const index = new MapIndex();
    const question = (id: string) => ({
      id,
      question: `what about ${id}?`,
      status: "unanswered" as const,
      askedId: `s1-m${id === "q1" ? 0 : 1}`,
      askedTs: NOW,
      answerIds: [],
    });
    const result = {
      channel: "c",
      segmentId: "s1",
      first: { id: "s1-m0", ts: NOW },
      last: { id: "s1-m1", ts: NOW },
      messageIds: ["s1-m0", "s1-m1"],
      candidates: [],
      questions: [question("q1"), question("q2")],
    } as unknown as SegmentResult;
    const hidden = {
      v: 1,
      channel: "c",
      segmentId: "s1",
      questionId: "q1",
      askedId: "s1-m0",
      askedTs: NOW,
      action: "hidden",
      at: new Date(NOW).toISOString(),
    };
    const indexer = new SearchIndexer({
      index,
      results: { getResult: async () => result },
      messages: { getMessages: async () => stored().slice(0, 2) },
      corrections: async () => [hidden] as never,
    });
    await indexer.stored(result);
    expect([...index.docs.keys()].filter((id) => id.startsWith("question:"))).toEqual([
      "question:c:q2",
    ]);
  });
});

describe("segmentDocuments", () => {
  it("cites only the segment's messages still stored, and only the topics it supports", () => {
    const [first, second, third] = stored();
    const result = {
      channel: "c",
      segmentId: "s1",
      first: { id: "s1-m0", ts: NOW },
      last: { id: "s1-m2", ts: NOW },
      messageIds: ["s1-m0", "s1-m1", "s1-m2"],
      candidates: [{ topic: "GRUB" }],
      questions: [],
    } as unknown as SegmentResult;
    const other = textMessage("user", "elsewhere", { id: "s2-m0", ts: NOW, author: "x" });
    const documents = segmentDocuments(
      result,
      [first, { ...second, deleted: true }, third, other] as Message[],
      [
        {
          topic: "grub",
          normalizedTopic: "grub",
          aliases: [],
          bestReason: "",
          lastSeen: NOW,
          evidence: [],
        },
        {
          topic: "wifi",
          normalizedTopic: "wifi",
          aliases: [],
          bestReason: "",
          lastSeen: NOW,
          evidence: [],
        },
      ] as unknown as Topic[],
    );
    expect(documents.map((d) => d.id)).toEqual([
      "message:c:s1-m0",
      "message:c:s1-m2",
      "conversation:c:s1",
      "topic:c:grub",
    ]);
    expect(documents[2]?.evidence).toEqual(["s1-m0", "s1-m2"]);
  });

  it("links the deployed index's Discord documents by the guild their stored messages carry", () => {
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const ids = ["1195000000000000001", "1195000000000000002"];
    const result = {
      channel,
      segmentId: "s1",
      first: { id: ids[0], ts: NOW },
      last: { id: ids[1], ts: NOW },
      messageIds: ids,
      candidates: [],
      questions: [],
    } as unknown as SegmentResult;
    // One as the store holds it, one inline as a segment body carries it.
    const documents = segmentDocuments(result, [
      textMessage("user", "why?", { id: ids[0], ts: NOW, platform: "discord", guild }),
      { id: ids[1], ts: NOW, text: "because", platform: "discord", guild },
    ] as Message[]);
    expect(documents.map((d) => [d.kind, d.permalink])).toEqual([
      ["message", `https://discord.com/channels/${guild}/${channel}/${ids[0]}`],
      ["message", `https://discord.com/channels/${guild}/${channel}/${ids[1]}`],
      ["conversation", `https://discord.com/channels/${guild}/${channel}/${ids[0]}`],
    ]);
  });

  it("reads chat messages from stored or inline ones, leaving out those without an id or time", () => {
    const chat = storedChatMessages("c", [
      { ...textMessage("user", "hi", { id: "1", ts: 5, author: "a" }), userId: "U1", kind: "bot" },
      { id: "2", ts: 6, text: "inline" },
      textMessage("user", "no id", { ts: 7 }),
    ] as never);
    expect(chat).toEqual([
      { id: "1", ts: 5, channel: "c", text: "hi", user: "a", kind: "bot", userId: "U1" },
      { id: "2", ts: 6, channel: "c", text: "inline" },
    ]);
  });
});
