import { InvalidModelOutputError, LLMError } from "convoseg/extraction";
import { SegmentBusyError } from "convoseg/knowledge";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  startChatCompletionsServer,
} from "../support/llm-servers.js";
import {
  answerTopics,
  COMPLETION_TOKENS,
  createResultsTestTable,
  extractorOf,
  openAI,
  PROMPT_TOKENS,
  promptOf,
  segmentOf,
  TEN_TEXTS,
  WINDOWS_OF_TEN,
} from "./fixtures.js";

const client = testDynamoDbClient();
const startServer = closedAfterEach(startChatCompletionsServer);
let tableName: string;

beforeAll(async () => {
  tableName = await createResultsTestTable(client);
});

const reader = () => new KnowledgeReader({ client, tableName });
/** A stored window reply's usage: one call. */
const usage = {
  calls: 1,
  inputTokens: 5,
  outputTokens: 2,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
};
const storedResults = async (channel: string) =>
  (await new DynamoDbResultStore({ client, tableName }).listResults(channel)).length;

describe("SegmentExtractor", () => {
  it("stores one result with stable ids, evidence message ids and every call's usage", async () => {
    const server = await startServer(answerTopics);
    const { segment, messages } = segmentOf("first", TEN_TEXTS, "store");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });

    const outcome = await extractor.extract(segment, messages);

    expect(outcome.status).toBe("extracted");
    expect(server.requests).toHaveLength(WINDOWS_OF_TEN);
    const stored = await reader().result("store", "first");
    expect(stored).toEqual(outcome.result);
    expect(stored?.usage).toEqual({
      calls: WINDOWS_OF_TEN,
      inputTokens: WINDOWS_OF_TEN * PROMPT_TOKENS,
      outputTokens: WINDOWS_OF_TEN * COMPLETION_TOKENS,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    const byTopic = new Map(stored?.candidates.map((c) => [c.topic, c]));
    expect([...byTopic.keys()].sort()).toEqual(["grub", "kernel", "wifi"]);
    expect(byTopic.get("grub")?.messageIds).toEqual(["first-m0", "first-m2"]);
    expect(byTopic.get("wifi")?.messageIds).toEqual(["first-m4", "first-m7"]);
    expect(byTopic.get("kernel")?.messageIds).toEqual(["first-m8", "first-m9"]);
    // The same topic of the same segment always gets the same id; another segment another.
    const again = segmentOf("second", TEN_TEXTS, "store");
    const other = await extractor.extract(again.segment, again.messages);
    const otherIds = new Map(other.result.candidates.map((c) => [c.topic, c.id]));
    expect(otherIds.get("grub")).not.toBe(byTopic.get("grub")?.id);
    expect(stored?.promptVersion).toBe("3/sliding-4-1");

    const topics = await reader().topics("store");
    expect(topics.map((t) => [t.normalizedTopic, t.segments]).sort()).toEqual([
      ["grub", 2],
      ["kernel", 2],
      ["wifi", 2],
    ]);
    const grub = topics.find((t) => t.normalizedTopic === "grub");
    if (grub === undefined) throw new Error("no grub topic");
    expect(grub.firstSeen).toBe(messages[0].ts);
    expect(grub.lastSeen).toBe(messages[2].ts);
    expect(grub.tags).toEqual(["support", "grub"]);
    expect(grub.evidence.map((e) => e.messageIds)).toEqual(
      expect.arrayContaining([
        ["first-m0", "first-m2"],
        ["second-m0", "second-m2"],
      ]),
    );
  });

  it("stores a result past DynamoDB's item limit by leaving its message ids out, not failing for ever", async () => {
    const server = await startServer(answerTopics);
    // 420 messages with ids of 1,000 bytes: the ids alone are over 400 KB.
    const texts = Array.from({ length: 420 }, (_, i) => (i < 3 ? TEN_TEXTS[i] : `line ${i}`));
    const { segment, messages } = segmentOf("huge", texts, "limits");
    const long = messages.map((m, i) => ({
      ...m,
      id: `${String(i).padStart(4, "0")}${"x".repeat(996)}`,
    }));
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url), concurrency: 4 });

    const outcome = await extractor.extract(
      {
        ...segment,
        first: { id: long[0].id, ts: long[0].ts },
        last: { id: long[419].id, ts: long[419].ts },
      },
      long,
    );

    expect(outcome.status).toBe("extracted");
    const stored = await reader().result("limits", "huge");
    expect(stored).toEqual(outcome.result);
    expect(stored).not.toHaveProperty("messageIds");
    expect(stored?.trimmed).toEqual({ messageIds: 420 });
    expect(stored?.candidates.map((c) => [c.topic, c.messageIds, c.authorCount])).toEqual([
      ["grub", [long[0].id, long[2].id], 2],
    ]);
  });

  it("stores the questions of the windows by message id, merged across overlapping windows", async () => {
    const numberOf = (prompt: string, text: string) =>
      prompt
        .split("\n")
        .find((line) => line.startsWith("Turn ") && line.includes(text))
        ?.split(" ")[1];
    const server = await startServer((request) => {
      const prompt = promptOf(request);
      const questions = [];
      const around = numberOf(prompt, "anyone around?");
      if (around !== undefined) {
        questions.push({
          question: "anyone around?",
          asked: Number(around),
          status: "unanswered",
          answer: null,
          answered_by: [],
        });
      }
      const chip = numberOf(prompt, "which #wifi chip");
      const intel = numberOf(prompt, "an intel one");
      if (chip !== undefined) {
        questions.push({
          question: "Which wifi chip is it?",
          asked: Number(chip),
          status: intel === undefined ? "unanswered" : "answered",
          answer: intel === undefined ? null : "An Intel one.",
          answered_by: intel === undefined ? [] : [Number(intel)],
        });
      }
      return chatCompletion(JSON.stringify({ candidates: [], questions }));
    });
    const { segment, messages } = segmentOf("asked", TEN_TEXTS, "questions");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });
    await extractor.extract(segment, messages);
    const stored = await reader().result("questions", "asked");
    expect(stored?.questions?.map(({ id: _id, ...q }) => q)).toEqual([
      {
        question: "anyone around?",
        status: "unanswered",
        askedId: "asked-m3",
        askedTs: messages[3].ts,
        askedBy: "bob",
        answerIds: [],
      },
      {
        question: "Which wifi chip is it?",
        status: "answered",
        askedId: "asked-m5",
        askedTs: messages[5].ts,
        askedBy: "bob",
        answer: "An Intel one.",
        answerIds: ["asked-m6"],
      },
    ]);
  });

  it("keeps a window reply's questions, and reads one stored without them as none", async () => {
    const store = new DynamoDbResultStore({ client, tableName });
    const questions = [
      { question: "q?", asked: 1, status: "answered" as const, answer: "a", answeredBy: [2, 3] },
      { question: "r?", asked: 2, status: "unclear" as const, answeredBy: [] },
    ];
    await store.putWindow(
      "windows",
      "asked",
      { candidates: [], questions, usage },
      Date.now() + 60_000,
    );
    expect(await store.getWindow("windows", "asked")).toEqual({ candidates: [], questions, usage });
    await store.putWindow("windows", "old", { candidates: [], usage }, Date.now() + 60_000);
    const old = await store.getWindow("windows", "old");
    expect(old).toEqual({ candidates: [], usage });
    expect(old?.questions ?? []).toEqual([]);
  });

  it("keeps what the bounds cut with a stored window reply, so a retry reusing it reports the same", async () => {
    const store = new DynamoDbResultStore({ client, tableName });
    const candidates = [
      { topic: "t", reason: "r", confidence: 0.9, tags: [], turnRange: null, subjective: false },
    ];
    await store.putWindow(
      "windows",
      "cut",
      { candidates, usage, trimmed: { topics: 1, candidates: 3 } },
      Date.now() + 60_000,
    );
    await store.putWindow("windows", "whole", { candidates, usage }, Date.now() + 60_000);
    expect(await store.getWindow("windows", "cut")).toEqual({
      candidates,
      usage,
      trimmed: { topics: 1, candidates: 3 },
    });
    expect(await store.getWindow("windows", "whole")).toEqual({ candidates, usage });
  });

  it("extracts a late segment too, its result and topic entries saying what it belongs after", async () => {
    const server = await startServer(answerTopics);
    const { segment, messages } = segmentOf("late-one", TEN_TEXTS.slice(0, 3), "late");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });

    const outcome = await extractor.extract(
      { ...segment, late: true, belongsAfter: "earlier-segment" },
      messages,
    );

    expect(outcome.result).toMatchObject({ late: true, belongsAfter: "earlier-segment" });
    const [topic] = await reader().topics("late");
    expect(topic.evidence).toEqual([
      expect.objectContaining({ segmentId: "late-one", late: true }),
    ]);
  });

  it("stores one topic entry for topics one extractor wrote twice in another case", async () => {
    // One key per normalized topic: a batch writing one key twice fails as a whole, every time.
    const candidate = (topic: string, confidence: number, turn: number) => ({
      topic,
      reason: "said",
      confidence,
      tags: [topic.toLowerCase()],
      turnRange: [turn, turn] as [number, number],
      subjective: false,
    });
    const extractor = new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName }),
      extractor: {
        extract: async () => ({
          candidates: [
            candidate("FixRes", 0.9, 2),
            candidate("fixres", 0.5, 0),
            candidate("grub", 1, 1),
          ],
        }),
      },
      model: "keyphrases",
      promptVersion: "test",
      leaseMs: 60_000,
    });
    const { segment, messages } = segmentOf("twice", TEN_TEXTS.slice(0, 3), "cases");

    const outcome = await extractor.extract(segment, messages);

    expect(outcome.status).toBe("extracted");
    expect(outcome.result.candidates.map((c) => [c.topic, c.messageIds])).toEqual([
      ["FixRes", ["twice-m0", "twice-m2"]],
      ["grub", ["twice-m1", "twice-m1"]],
    ]);
    const topics = await reader().topics("cases");
    expect(topics.map((t) => [t.normalizedTopic, t.segments]).sort()).toEqual([
      ["fixres", 1],
      ["grub", 1],
    ]);
  });

  it("acknowledges a redelivered segment without a model call", async () => {
    const server = await startServer(answerTopics);
    const { segment, messages } = segmentOf("redelivered", TEN_TEXTS, "redelivery");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });
    const first = await extractor.extract(segment, messages);

    const second = await extractor.extract(segment, messages);

    expect(second.status).toBe("already-extracted");
    expect(second.result).toEqual(first.result);
    expect(second.attempt.calls).toBe(0);
    expect(server.requests).toHaveLength(WINDOWS_OF_TEN);
    expect((await reader().topics("redelivery")).every((t) => t.segments === 1)).toBe(true);
  });

  it("lets only one of two concurrent deliveries pay", async () => {
    const server = await startServer((request) => ({ ...answerTopics(request), delayMs: 100 }));
    const { segment, messages } = segmentOf("concurrent", TEN_TEXTS, "concurrency");
    let owner = 0;
    const extractor = extractorOf({
      client,
      tableName,
      llm: openAI(server.url),
      owner: () => `delivery-${owner++}`,
    });

    const outcomes = await Promise.allSettled([
      extractor.extract(segment, messages),
      extractor.extract(segment, messages),
    ]);

    const fulfilled = outcomes.filter((o) => o.status === "fulfilled");
    const rejected = outcomes.filter((o) => o.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(SegmentBusyError);
    expect(server.requests).toHaveLength(WINDOWS_OF_TEN);
    // The loser's retry finds the result.
    expect((await extractor.extract(segment, messages)).status).toBe("already-extracted");
    expect(server.requests).toHaveLength(WINDOWS_OF_TEN);
  });

  it("stores nothing when a window fails, and the retry pays only that window and the rest", async () => {
    const server = await startServer((request, index) =>
      index === 1 ? chatError(500) : answerTopics(request),
    );
    const { segment, messages } = segmentOf("failed-window", TEN_TEXTS, "failures");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });

    await expect(extractor.extract(segment, messages)).rejects.toBeInstanceOf(LLMError);
    expect(await reader().result("failures", "failed-window")).toBeUndefined();
    expect(await reader().topics("failures")).toEqual([]);
    const firstPrompts = server.requests.map(promptOf);

    const retry = await extractor.extract(segment, messages);

    expect(retry.status).toBe("extracted");
    expect(retry.reusedWindows).toBe(1);
    const retried = server.requests.slice(firstPrompts.length).map(promptOf);
    expect(retried).toHaveLength(WINDOWS_OF_TEN - 1);
    expect(retried).not.toContain(firstPrompts[0]);
    expect(retry.result.usage.calls).toBe(WINDOWS_OF_TEN);
  });

  it("fails on invalid output after the repair request, and counts those calls in the usage", async () => {
    const server = await startServer((request, index) =>
      index === 1 || index === 2
        ? chatCompletion("this is not JSON", { usage: { prompt_tokens: 11, completion_tokens: 3 } })
        : answerTopics(request),
    );
    const { segment, messages } = segmentOf("invalid", TEN_TEXTS, "invalid");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });

    const failure = await extractor.extract(segment, messages).catch((error) => error);
    expect(failure).toBeInstanceOf(InvalidModelOutputError);
    expect(await reader().result("invalid", "invalid")).toBeUndefined();

    const retry = await extractor.extract(segment, messages);
    // One stored window, two rejected replies, then the two windows left.
    expect(server.requests).toHaveLength(1 + 2 + 2);
    expect(retry.result.usage.calls).toBe(5);
    expect(retry.result.usage.inputTokens).toBe(3 * PROMPT_TOKENS + 2 * 11);
    expect(retry.result.usage.outputTokens).toBe(3 * COMPLETION_TOKENS + 2 * 3);
  });

  it("replaces the result of another model, says so, and keeps one index entry per topic", async () => {
    const server = await startServer((request) => {
      const model = (request.body as { model: string }).model;
      const answer = answerTopics(request);
      if (model !== "model-b") return answer;
      // The second model does not see #kernel as a topic.
      const body = answer.body as { choices: { message: { content: string } }[] };
      const content = JSON.parse(body.choices[0].message.content) as {
        candidates: { topic: string }[];
      };
      content.candidates = content.candidates.filter((c) => c.topic !== "kernel");
      body.choices[0].message.content = JSON.stringify(content);
      return answer;
    });
    const { segment, messages } = segmentOf("replaced", TEN_TEXTS, "replacing");
    const first = await extractorOf({ client, tableName, llm: openAI(server.url) }).extract(
      segment,
      messages,
    );

    const second = await extractorOf({
      client,
      tableName,
      llm: openAI(server.url, "model-b"),
      model: "model-b",
    }).extract(segment, messages);

    expect(second.status).toBe("replaced");
    expect(second.result.replaced).toEqual({
      model: "test-model",
      promptVersion: first.result.promptVersion,
      extractedAt: first.result.extractedAt,
    });
    expect((await reader().result("replacing", "replaced"))?.model).toBe("model-b");
    const topics = await reader().topics("replacing");
    expect(topics.map((t) => [t.normalizedTopic, t.segments]).sort()).toEqual([
      ["grub", 1],
      ["wifi", 1],
    ]);
    expect(await storedResults("replacing")).toBe(1);
  });

  it("re-extracts on an operator's force and replaces the result", async () => {
    const server = await startServer(answerTopics);
    const { segment, messages } = segmentOf("forced", TEN_TEXTS, "forcing");
    const extractor = extractorOf({ client, tableName, llm: openAI(server.url) });
    await extractor.extract(segment, messages);

    const forced = await extractor.extract(segment, messages, { force: true });

    expect(forced.status).toBe("replaced");
    // Same prompts and model: the stored window replies answer it without a call.
    expect(forced.reusedWindows).toBe(WINDOWS_OF_TEN);
    expect(server.requests).toHaveLength(WINDOWS_OF_TEN);
    expect((await reader().topics("forcing")).every((t) => t.segments === 1)).toBe(true);
  });
});
