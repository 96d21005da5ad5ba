/** The extraction consumer given what is not a segment queue's event, or a body it must refuse. */

import { segmentConsumer } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { DLQ_URL, QueueSimulation } from "./queue-simulation.js";

function consumer(sim?: QueueSimulation) {
  const calls: unknown[] = [];
  const metrics = new Map<string, number>();
  const errors: string[] = [];
  const quiet = () => {};
  const handler = segmentConsumer({
    extractor: {
      extract: async (segment) => {
        calls.push(segment);
        throw new Error("not reached");
      },
    },
    messages: { getMessages: async () => [] },
    messagesTable: "messages",
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    logger: { info: quiet, warn: quiet, error: (message) => errors.push(message) },
    ...(sim && { sqs: sim.sqs, deadLetterQueueUrl: DLQ_URL, now: () => sim.now }),
  });
  return { handler, calls, metrics, errors };
}

describe("the extraction consumer given a bad event", () => {
  it.each([
    [
      {},
      /extract: expected an SQS event, \{"Records": \[\.\.\.\]\} \(got an object without Records\)/,
    ],
    [null, /\(got null\)/],
    ["x", /\(got string\)/],
    [
      { Records: [null] },
      /extract: Records\[0\] is not an SQS record \(expected messageId and body strings\)/,
    ],
    [{ Records: [{ messageId: "a" }] }, /Records\[0\] is not an SQS record/],
  ])("names %j, with what to do, and extracts nothing", async (event, said) => {
    const { handler, calls } = consumer();
    const error = await handler(event as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "KnowledgeError", code: "KNOWLEDGE_INVALID_EVENT" });
    expect((error as Error).message).toMatch(said);
    expect((error as Error).message).toMatch(/event source mapping/);
    expect(calls).toEqual([]);
  });
});

describe("a queued body with a channel ingestion refuses", () => {
  it("is given up on at once, named, without an extraction", async () => {
    const sim = new QueueSimulation(Date.UTC(2026, 0, 1), {
      maxReceiveCount: 1000,
      visibilityTimeoutSeconds: 900,
    });
    const { handler, calls, metrics, errors } = consumer(sim);
    const channel = "\x1b[2J\u202echan";
    sim.send(
      "s1",
      JSON.stringify({
        v: 1,
        segmentId: "s1",
        channel,
        late: false,
        belongsAfter: null,
        count: 1,
        first: { id: "m0", ts: 1 },
        last: { id: "m0", ts: 1 },
        messageIds: ["m0"],
        messages: [{ id: "m0", ts: 1, text: "hi" }],
      }),
      "g",
    );

    await sim.run(handler, Date.UTC(2026, 0, 30));

    expect(calls).toEqual([]);
    expect(sim.deadLetters.map((d) => d.by)).toEqual(["consumer"]);
    expect(sim.receives).toHaveLength(1);
    expect(metrics.get("PermanentFailures")).toBe(1);
    expect(errors[0]).toMatch(
      /gave up on segment at once \(the queued body is not a valid segment message: channel: contains control character U\+001B/,
    );
    // The log line never carries the raw channel.
    expect(errors.join("\n")).not.toContain("\x1b");
  });
});
