/**
 * A channel's topic index as extraction leaves it, written straight to a results table: `entries`
 * topic entries over `topics` topics, their segment counts skewed (a few topics in many
 * segments, most in one or two, as chat is), plus the channel's marks item and a few results.
 * For `bench/api.ts` and the API's DynamoDB tests; `writeSeededQuestions` adds a question index.
 */
import { createHash } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { realSleep } from "convoseg/backoff";
import { batchWriteAll, documentClient } from "convoseg/dynamodb";
import {
  DynamoDbResultStore,
  type SegmentResult,
  type StoredQuestion,
  type TopicSupport,
} from "convoseg/knowledge/store";

/** How many entries each of `topics` topics gets, summing to `entries`: Zipf-like, each at least one. */
function entriesPerTopic(entries: number, topics: number): number[] {
  const weights = Array.from({ length: topics }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const spare = entries - topics;
  const counts = weights.map((w) => 1 + Math.floor((w / total) * spare));
  let left = entries - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % topics, left--) counts[i]++;
  return counts;
}

export interface SeededChannel {
  supports: TopicSupport[];
  results: SegmentResult[];
}

const segmentIdOf = (i: number) =>
  createHash("sha256").update(`seg${i}`).digest("hex").slice(0, 32);

/** The entries and results seeded for `channel` (deterministic). */
export function seededChannel(channel: string, entries: number, topics: number): SeededChannel {
  const start = Date.UTC(2026, 0, 1);
  const supports: TopicSupport[] = [];
  entriesPerTopic(entries, topics).forEach((count, t) => {
    const topic = `topic number ${t} about subsystem ${t % 97}`;
    for (let s = 0; s < count; s++) {
      const segment = (t * 7919 + s * 104_729) % Math.max(entries, 1);
      const segmentId = segmentIdOf(segment);
      supports.push({
        v: 1,
        channel,
        topic,
        normalizedTopic: topic,
        segmentId,
        candidateId: createHash("sha256")
          .update(`${segmentId}\0${topic}`)
          .digest("hex")
          .slice(0, 32),
        late: false,
        confidence: 0.5 + ((t + s) % 50) / 100,
        reason: "the segment discusses it at some length, with a question and an answer",
        tags: ["subsystem", `s${t % 97}`],
        messageIds: [`${segmentId}-m01`, `${segmentId}-m09`],
        firstTs: start + segment * 60_000,
        lastTs: start + segment * 60_000 + 540_000,
        extractedAt: "2026-01-02T00:00:00.000Z",
      });
    }
  });
  const results = Array.from({ length: 3 }, (_, i): SegmentResult => {
    const segmentId = segmentIdOf(i);
    const ids = Array.from({ length: 10 }, (_, m) => `${segmentId}-m${String(m).padStart(2, "0")}`);
    return {
      v: 1,
      channel,
      segmentId,
      late: false,
      belongsAfter: null,
      count: ids.length,
      first: { id: ids[0], ts: start },
      last: { id: ids[9], ts: start + 540_000 },
      messageIds: ids,
      model: "offline",
      promptVersion: "bench",
      extractedAt: "2026-01-02T00:00:00.000Z",
      usage: { calls: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [],
    };
  });
  return { supports, results };
}

const topicKeyOf = (normalizedTopic: string) =>
  createHash("sha256").update(normalizedTopic).digest("hex").slice(0, 16);

/** Writes `seeded` to the results table and `channel`'s marks item to the channels table. */
export async function writeSeededChannel(
  client: DynamoDBClient,
  tables: { resultsTable: string; channelsTable: string },
  channel: string,
  seeded: SeededChannel,
): Promise<void> {
  const documents = documentClient(client);
  const pacing = { baseDelayMs: 20, maxDelayMs: 500, random: Math.random, sleep: realSleep };
  await batchWriteAll(
    [
      ...seeded.supports.map((s) => ({
        PutRequest: {
          Item: { ...s, item: `topic#${topicKeyOf(s.normalizedTopic)}#${s.segmentId}` },
        },
      })),
      ...seeded.results.map((r) => ({
        PutRequest: { Item: { ...r, item: `result#${r.segmentId}` } },
      })),
    ],
    { documents, tableName: tables.resultsTable, maxAttempts: 10, pacing },
  );
  await batchWriteAll([{ PutRequest: { Item: { channel, item: "marks", seq: 1, marks: 0 } } }], {
    documents,
    tableName: tables.channelsTable,
    maxAttempts: 10,
    pacing,
  });
}

/** Questions per seeded segment. */
const QUESTIONS_PER_SEGMENT = 100;

/**
 * Writes `count` questions of `channel` through the results store, as extraction does (results
 * of {@link QUESTIONS_PER_SEGMENT} questions, their entries with them): half unanswered, a
 * quarter answered, a quarter unclear, asked a minute apart. Resolves to how many are unanswered.
 */
export async function writeSeededQuestions(
  client: DynamoDBClient,
  resultsTable: string,
  channel: string,
  count: number,
): Promise<number> {
  const store = new DynamoDbResultStore({ client, tableName: resultsTable });
  const start = Date.UTC(2026, 0, 1);
  let unanswered = 0;
  for (let first = 0; first < count; first += QUESTIONS_PER_SEGMENT) {
    const segmentId = createHash("sha256").update(`questions${first}`).digest("hex").slice(0, 32);
    const questions = Array.from(
      { length: Math.min(QUESTIONS_PER_SEGMENT, count - first) },
      (_, i): StoredQuestion => {
        const n = first + i;
        const status = n % 2 === 0 ? "unanswered" : n % 4 === 1 ? "answered" : "unclear";
        if (status === "unanswered") unanswered++;
        return {
          id: createHash("sha256").update(`${segmentId}\0${n}`).digest("hex").slice(0, 32),
          question: `how do I get subsystem ${n % 97} to start again after the upgrade?`,
          status,
          askedId: `${segmentId}-m${String(i).padStart(3, "0")}`,
          askedTs: start + n * 60_000,
          askedBy: `user${n % 31}`,
          ...(status === "answered" && { answer: "reinstall the package and reboot" }),
          answerIds:
            status === "answered" ? [`${segmentId}-m${String(i + 1).padStart(3, "0")}`] : [],
        };
      },
    );
    const result: SegmentResult = {
      v: 1,
      channel,
      segmentId,
      late: false,
      belongsAfter: null,
      count: questions.length,
      first: { id: questions[0].askedId, ts: questions[0].askedTs },
      last: {
        id: questions[questions.length - 1].askedId,
        ts: questions[questions.length - 1].askedTs,
      },
      model: "offline",
      promptVersion: "bench",
      extractedAt: "2026-01-02T00:00:00.000Z",
      usage: { calls: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [],
      questions,
    };
    const lease = {
      owner: "bench",
      now: Date.now(),
      leaseMs: 60_000,
      expiresAt: Date.now() + 3_600_000,
    };
    await store.acquireLease(channel, segmentId, lease);
    await store.saveResult(result, [], undefined, "bench");
  }
  return unanswered;
}
