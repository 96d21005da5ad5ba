/**
 * Redaction on the memory store: the shared contract, the setting's checks, a crash between any
 * two writes then a retry, and the consumer's half of the race with an extraction in flight.
 */
import type { SQSEvent } from "aws-lambda";
import { MemoryResultStore, type RedactionCounts } from "convoseg/knowledge/store";
import { KnowledgeRedactor, segmentConsumer } from "convoseg/knowledge/write";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEN_TEXTS } from "./fixtures.js";
import { describeRedaction, extractorFor, FakeMessageStates, NOW, segmentAt } from "./redaction.js";

async function snapshot(store: MemoryResultStore, channel: string): Promise<string> {
  return JSON.stringify({
    results: await store.listResults(channel),
    supports: await store.listSupports(channel),
    windows: [...store.listWindows(channel)],
  });
}

describeRedaction("MemoryResultStore", async () => {
  const store = new MemoryResultStore();
  return {
    store,
    dump: (channel) => snapshot(store, channel),
    windows: async (channel) => store.listWindows(channel).size,
  };
});

describe("reextractChangedShare", () => {
  it.each([-0.1, 1.5, Number.NaN])("refuses %s, naming the setting and its range", (share) => {
    const make = () =>
      new KnowledgeRedactor({
        store: new MemoryResultStore(),
        states: new FakeMessageStates(),
        reextractChangedShare: share,
      });
    expect(make).toThrow(/reextractChangedShare must be a number from 0 .* to 1/);
    expect(make).toThrow(expect.objectContaining({ code: "KNOWLEDGE_INVALID_CONFIG" }));
  });

  it("re-extracts on the first change at 0 and never at 1", async () => {
    for (const [share, expected] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const store = new MemoryResultStore();
      const states = new FakeMessageStates();
      const { segment, messages } = segmentAt("c", "s1", TEN_TEXTS, NOW);
      states.add(messages);
      await extractorFor(store).extract(segment, messages);
      const asked: string[] = [];
      const redactor = new KnowledgeRedactor({
        store,
        states,
        reextractChangedShare: share,
        requestReextraction: async (_, id) => void asked.push(id),
      });
      for (const m of messages.slice(0, 9)) await redactor.redact("c", [states.delete(m.id)]);
      expect(asked.length).toBe(expected);
    }
  });
});

class Crash extends Error {
  override readonly name: string = "Crash";
}

describe("a redaction that crashes between any two writes", () => {
  it("ends, once retried, in the state of one that did not, and touches nothing more", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(
          TEN_TEXTS.map((_, i) => i),
          { minLength: 1 },
        ),
        fc.subarray([0, 2, 5, 9]),
        fc.nat(40),
        async (deleted, edited, crashAt) => {
          const run = async (crash: number | undefined) => {
            let writes = 0;
            let armed = false;
            const store = new MemoryResultStore({
              beforeWrite: () => {
                if (armed && crash !== undefined && writes++ === crash) throw new Crash();
              },
            });
            const states = new FakeMessageStates();
            const { segment, messages } = segmentAt("c", "s1", TEN_TEXTS, NOW);
            states.add(messages);
            await extractorFor(store).extract(segment, messages);
            const changes = [
              ...edited.map((i) => states.edit(messages[i].id, "changed", NOW + i)),
              ...deleted.map((i) => states.delete(messages[i].id)),
            ];
            const asked: string[] = [];
            const redactor = new KnowledgeRedactor({
              store,
              states,
              requestReextraction: async (_, id) => void asked.push(id),
            });
            armed = true;
            try {
              await redactor.redact("c", changes);
            } catch (error) {
              if (!(error instanceof Crash)) throw error;
              armed = false;
              await redactor.redact("c", changes);
            }
            armed = false;
            const again = await redactor.redact("c", changes);
            return { state: await snapshot(store, "c"), again, asked: asked.length > 0 };
          };
          const clean = await run(undefined);
          const crashed = await run(crashAt);
          expect(crashed.state).toBe(clean.state);
          expect(crashed.asked).toBe(clean.asked);
          const nothing: RedactionCounts = {
            results: 0,
            candidatesRemoved: 0,
            questionsRemoved: 0,
            topicEntriesUpdated: 0,
            topicEntriesDeleted: 0,
            windowsDeleted: 0,
            reextractionsRequested: 0,
            termSegmentsWithdrawn: 0,
          };
          expect(crashed.again).toEqual(nothing);
        },
      ),
      { numRuns: 150 },
    );
  });
});

/** The extraction consumer on memory stores, reading the message store's states. */
function consumerOf(states: FakeMessageStates) {
  const store = new MemoryResultStore();
  const redactor = new KnowledgeRedactor({ store, states });
  const metrics = new Map<string, number>();
  const quiet = () => {};
  const handler = segmentConsumer({
    extractor: extractorFor(store),
    messages: { getMessages: async () => [] },
    messagesTable: "messages",
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    logger: { info: quiet, warn: quiet, error: quiet },
    current: { states, redactor },
  });
  return { store, redactor, metrics, handler };
}

function eventOf(segment: object, messages: object[]): SQSEvent {
  const body = JSON.stringify({ v: 1, ...segment, messages });
  return {
    Records: [{ messageId: "r1", body, attributes: {}, messageAttributes: {} } as never],
  };
}

describe("a deletion while its segment is extracted", () => {
  const { segment, messages } = segmentAt("race", "s1", TEN_TEXTS, NOW);

  it("is left out when it landed before the consumer read the states", async () => {
    const states = new FakeMessageStates();
    states.add(messages);
    states.delete("s1-m9");
    states.edit("s1-m0", "my #grub menu vanished", NOW + 5);
    const { store, handler } = consumerOf(states);
    await handler(eventOf(segment, messages));
    const result = await store.getResult("race", "s1");
    expect(result?.messageIds).not.toContain("s1-m9");
    expect(result?.count).toBe(9);
    expect(result?.edits).toEqual({ "s1-m0": NOW + 5 });
    expect(result?.changedMessages).toBeUndefined();
    expect(states.calls.map((c) => c.consistent)).toEqual([false, true]);
  });

  it("is redacted by the consumer when ingestion's redaction ran before the result was written", async () => {
    const states = new FakeMessageStates();
    states.add(messages);
    const { store, redactor, metrics, handler } = consumerOf(states);
    let ingestion: RedactionCounts | undefined;
    // After the consumer's first read: the store op, then ingestion's redaction, which finds
    // no result yet.
    states.afterCall = async (call) => {
      if (call !== 1) return;
      ingestion = await redactor.redact("race", [states.delete("s1-m8"), states.delete("s1-m9")]);
    };
    await handler(eventOf(segment, messages));
    expect(ingestion?.results).toBe(0);
    const result = await store.getResult("race", "s1");
    expect(result?.messageIds).not.toContain("s1-m8");
    expect(result?.candidates.map((c) => c.topic)).toEqual(["grub", "wifi"]);
    expect(store.listWindows("race").size).toBe(0);
    expect(metrics.get("ChangesAfterExtraction")).toBe(2);
  });

  it("is redacted by ingestion when it landed after the consumer's second read", async () => {
    const states = new FakeMessageStates();
    states.add(messages);
    const { store, redactor, metrics, handler } = consumerOf(states);
    let ingestion: RedactionCounts | undefined;
    states.afterCall = async (call) => {
      if (call !== 2) return;
      states.afterCall = undefined;
      ingestion = await redactor.redact("race", [states.delete("s1-m8"), states.delete("s1-m9")]);
    };
    await handler(eventOf(segment, messages));
    expect(ingestion).toMatchObject({ results: 1, candidatesRemoved: 1 });
    expect(metrics.get("ChangesAfterExtraction")).toBe(0);
    expect((await store.getResult("race", "s1"))?.candidates.map((c) => c.topic)).toEqual([
      "grub",
      "wifi",
    ]);
  });

  it("stores nothing when every message was deleted before extraction", async () => {
    const states = new FakeMessageStates();
    states.add(messages);
    for (const m of messages) states.delete(m.id);
    const { store, metrics, handler } = consumerOf(states);
    const response = await handler(eventOf(segment, messages));
    expect(response.batchItemFailures).toEqual([]);
    expect(await store.getResult("race", "s1")).toBeUndefined();
    expect(metrics.get("SegmentsAllDeleted")).toBe(1);
  });
});
