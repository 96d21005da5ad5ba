import { Analyzer, InvalidModelOutputError, type LLM, LLMError } from "convoseg/extraction";
import { MemoryLedger, MemoryResultStore } from "convoseg/knowledge/store";
import {
  CircuitBreaker,
  DEFAULT_RETRY,
  GAVE_UP_ATTRIBUTE,
  guardedLLM,
  INVALID_OUTPUT_ATTEMPTS,
  type RetrySchedule,
  SegmentExtractor,
  segmentConsumer,
  TokenBudget,
  utcDay,
} from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { DEPLOYMENT_PARTITION } from "../../lib/knowledge/store/schema/items.js";
import { DLQ_URL, QueueSimulation } from "./queue-simulation.js";

const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 1, 6);
const ANALYSIS = { route: "sliding", windowSize: 4, overlap: 1, maxConcurrency: 1 } as const;

/** A v1 inline segment body of `count` messages. */
function body(channel: string, segmentId: string, count = 3): string {
  const messages = Array.from({ length: count }, (_, i) => ({
    id: `${segmentId}-m${i}`,
    ts: START - HOUR + i * 1000,
    author: "alice",
    text: `message ${i}`,
  }));
  return JSON.stringify({
    v: 1,
    segmentId,
    channel,
    late: false,
    belongsAfter: null,
    count,
    first: { id: messages[0].id, ts: messages[0].ts },
    last: { id: messages[count - 1].id, ts: messages[count - 1].ts },
    messageIds: messages.map((m) => m.id),
    messages,
  });
}

/**
 * The extraction function on the simulation: the real consumer, extractor, analyzer, budget and
 * breaker on memory stores, a model that fails with a 503 while `down(now)` says so.
 */
function deployment(
  sim: QueueSimulation,
  options: {
    down?: (now: number) => boolean;
    budget?: number;
    retry?: RetrySchedule;
    /** What every call fails with instead of a 503, when down. */
    failure?: () => Error;
  } = {},
) {
  const now = () => sim.now;
  const ledger = new MemoryLedger();
  const store = new MemoryResultStore();
  const metrics = new Map<string, number>();
  const model = { calls: 0, failures: 0 };
  const llm: LLM = {
    async chatJSON(_messages, call) {
      model.calls++;
      // Each call takes a second of the fake clock.
      sim.now += 1000;
      if (options.down?.(sim.now)) {
        model.failures++;
        throw (
          options.failure?.() ?? new LLMError("503 Service Unavailable (maxRetries 3)", true, 503)
        );
      }
      call?.onUsage?.(
        { inputTokens: 900, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 },
        { model: "m", latencyMs: 1000 },
      );
      return { candidates: [] };
    },
  };
  const budget =
    options.budget === undefined
      ? undefined
      : new TokenBudget({ counter: ledger, daily: options.budget, now });
  const breaker = new CircuitBreaker({ now });
  const quiet = () => {};
  const errors: { message: string; attributes: Record<string, unknown> }[] = [];
  const handler = segmentConsumer({
    extractor: new SegmentExtractor({
      store,
      extractor: (segment) =>
        new Analyzer(guardedLLM(llm, { channel: segment.channel, budget, breaker }), ANALYSIS),
      model: "m",
      promptVersion: "p",
      leaseMs: 15 * 60_000,
      now,
    }),
    messages: { get: async () => [] } as never,
    messagesTable: "messages",
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    logger: {
      info: quiet,
      warn: quiet,
      error: (message, attributes) => errors.push({ message, attributes }),
    },
    sqs: sim.sqs,
    attempts: ledger,
    deadLetterQueueUrl: DLQ_URL,
    retry: options.retry ?? DEFAULT_RETRY,
    now,
  });
  return { handler, ledger, store, metrics, model, errors };
}

const simulation = () =>
  new QueueSimulation(START, { maxReceiveCount: 1000, visibilityTimeoutSeconds: 6 * 900 });

describe("a provider outage, on a fake clock", () => {
  it("of 6 hours loses nothing: every segment is extracted once the provider is back", async () => {
    const sim = simulation();
    const { handler, ledger, store, metrics, model } = deployment(sim, {
      down: (now) => now < START + 6 * HOUR,
    });
    // Two channels; the first has three segments in order, the later ones behind the first.
    sim.send("a1", body("alpha", "a1"), "alpha");
    sim.send("a2", body("alpha", "a2"), "alpha");
    sim.send("a3", body("alpha", "a3"), "alpha");
    sim.send("b1", body("beta", "b1"), "beta");

    await sim.run(handler, START + 48 * HOUR);

    expect(sim.pending).toBe(0);
    expect(sim.deadLetters).toEqual([]);
    for (const [channel, id] of [
      ["alpha", "a1"],
      ["alpha", "a2"],
      ["alpha", "a3"],
      ["beta", "b1"],
    ]) {
      expect((await store.getResult(channel, id))?.segmentId).toBe(id);
    }
    // The heads used some of their attempts; the segments behind them, skipped, none.
    expect(ledger.attemptsOf("alpha", "a1")).toBeGreaterThan(1);
    expect(ledger.attemptsOf("alpha", "a1")).toBeLessThan(DEFAULT_RETRY.maxAttempts);
    expect(ledger.attemptsOf("alpha", "a2")).toBe(0);
    expect(ledger.attemptsOf("alpha", "a3")).toBe(0);
    // SQS counted the skipped segments' receives: more than the five the queue allowed before.
    const receivesOfA3 = sim.receives.filter((r) => r.id === "a3").length;
    expect(receivesOfA3).toBeGreaterThan(5);
    // The breaker kept the dead endpoint from being called for every receive.
    expect(metrics.get("CircuitOpen")).toBeGreaterThan(0);
    expect(model.failures).toBeLessThan(sim.receives.length);
    // Back within the longest delay of the provider's return.
    const last = Math.max(...sim.receives.map((r) => r.at));
    expect(last).toBeLessThanOrEqual(START + 6 * HOUR + DEFAULT_RETRY.maxDelaySeconds * 1000);
  });

  it("that never ends dead-letters a segment after its attempts, by the consumer, once", async () => {
    const sim = simulation();
    const { handler, ledger, metrics } = deployment(sim, { down: () => true });
    sim.send("a1", body("alpha", "a1"), "alpha");
    sim.send("a2", body("alpha", "a2"), "alpha");

    await sim.run(handler, START + 30 * 24 * HOUR);

    expect(sim.deadLetters.map((d) => [JSON.parse(d.body).segmentId, d.by])).toEqual([
      ["a1", "consumer"],
      ["a2", "consumer"],
    ]);
    expect(metrics.get("SegmentsDeadLettered")).toBe(2);
    expect(metrics.get("ExtractionFailures")).toBe(2 * DEFAULT_RETRY.maxAttempts);
    // Cleared, so that a redrive starts counting again.
    expect(ledger.attemptsOf("alpha", "a1")).toBe(0);
    // The first gave up after about 9 hours of tries, not 15 minutes.
    const a1 = sim.receives.filter((r) => r.id === "a1");
    expect(a1.at(-1)?.at ?? 0).toBeGreaterThan(START + 6 * HOUR);
  });
});

describe("a failure a retry cannot fix", () => {
  const permanent: [string, () => Error, RegExp][] = [
    [
      "a 400",
      () => new LLMError("400 unsupported parameter (not retryable)", false, 400),
      /refused the request \(400\)/,
    ],
    ["a 404 model", () => new LLMError("404 no such model", false, 404), /\(404\)/],
    [
      "a table's refusal",
      // As DynamoDB refuses a batch that writes one key twice: never accepted on a retry.
      () =>
        Object.assign(new Error("Provided list of item keys contains duplicates"), {
          name: "ValidationException",
        }),
      /a table refused a write as invalid \(Provided list of item keys contains duplicates\)/,
    ],
  ];
  for (const [what, failure, cause] of permanent) {
    it(`(${what}) dead-letters the segment at its first failure, naming the cause`, async () => {
      const sim = simulation();
      const { handler, metrics, model, errors } = deployment(sim, { down: () => true, failure });
      sim.send("a1", body("alpha", "a1"), "alpha");

      await sim.run(handler, START + 30 * 24 * HOUR);

      expect(sim.deadLetters.map((d) => d.by)).toEqual(["consumer"]);
      expect(sim.receives).toHaveLength(1);
      expect(model.calls).toBe(1);
      expect(metrics.get("PermanentFailures")).toBe(1);
      expect(metrics.get("SegmentsDeadLettered")).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0].message).toMatch(/^gave up on segment at once \(/);
      expect(errors[0].message).toMatch(cause);
      expect(errors[0].attributes).toMatchObject({ segmentId: "a1", attempt: 1, permanent: true });
      // Never the model's reply.
      expect(JSON.stringify(errors)).not.toContain("{nope");
    });
  }

  it("but a 401 is not one: the segment waits for the key to be fixed", async () => {
    const sim = simulation();
    const failure = () => new LLMError("401 (not retryable)", false, 401);
    const { handler, metrics } = deployment(sim, { down: () => true, failure });
    sim.send("a1", body("alpha", "a1"), "alpha");

    await sim.run(handler, START + 3 * HOUR);

    expect(sim.deadLetters).toEqual([]);
    expect(metrics.get("PermanentFailures")).toBeUndefined();
  });
});

describe("a reply still invalid after its repair request", () => {
  const invalid = () => new InvalidModelOutputError("not JSON (after one repair request)", "{nope");

  it("is tried again with backoff, and the segment is extracted once a reply parses", async () => {
    const sim = simulation();
    // The model samples: its first replies do not parse, a later one does.
    const { handler, metrics, store, ledger } = deployment(sim, {
      down: (now) => now < START + 60_000,
      failure: invalid,
    });
    sim.send("a1", body("alpha", "a1"), "alpha");

    await sim.run(handler, START + 3 * HOUR);

    expect(sim.deadLetters).toEqual([]);
    expect((await store.getResult("alpha", "a1"))?.segmentId).toBe("a1");
    expect(metrics.get("InvalidModelOutputs")).toBeGreaterThanOrEqual(1);
    expect(metrics.get("PermanentFailures")).toBeUndefined();
    expect(metrics.get("SegmentsExtracted")).toBe(1);
    // Backed off between attempts, not a tight loop.
    const times = sim.receives.filter((r) => r.id === "a1").map((r) => r.at);
    expect(times.length).toBeGreaterThan(1);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(
      DEFAULT_RETRY.baseDelaySeconds * 1000,
    );
    // Each failed one counted as an attempt.
    expect(ledger.attemptsOf("alpha", "a1")).toBe(times.length - 1);
  });

  it(`is given up after ${INVALID_OUTPUT_ATTEMPTS} attempts, fewer than an outage's, never quoting the reply`, async () => {
    const sim = simulation();
    const { handler, metrics, model, errors } = deployment(sim, {
      down: () => true,
      failure: invalid,
    });
    sim.send("a1", body("alpha", "a1"), "alpha");

    await sim.run(handler, START + 30 * 24 * HOUR);

    expect(INVALID_OUTPUT_ATTEMPTS).toBeLessThan(DEFAULT_RETRY.maxAttempts);
    expect(sim.deadLetters.map((d) => d.by)).toEqual(["consumer"]);
    // Each attempt is the window's call and its repair request.
    expect(model.calls).toBe(2 * INVALID_OUTPUT_ATTEMPTS);
    expect(metrics.get("InvalidModelOutputs")).toBe(INVALID_OUTPUT_ATTEMPTS);
    expect(metrics.get("PermanentFailures")).toBeUndefined();
    expect(errors.at(-1)?.message).toBe(
      `gave up on segment after ${INVALID_OUTPUT_ATTEMPTS} failed attempts: moved to the dead-letter queue`,
    );
    expect(errors.at(-1)?.attributes).toMatchObject({ maxAttempts: INVALID_OUTPUT_ATTEMPTS });
    expect(JSON.stringify(errors)).not.toContain("{nope");
  });
});

describe("a spent daily token budget, on a fake clock", () => {
  it("pauses extraction for the rest of the day without a model call, then resumes", async () => {
    const sim = simulation();
    const { handler, ledger, store, metrics, model } = deployment(sim, { budget: 50_000 });
    // Today's budget is already spent.
    await ledger.add(DEPLOYMENT_PARTITION, utcDay(START), 50_000);
    sim.send("a1", body("alpha", "a1"), "alpha");
    sim.send("b1", body("beta", "b1"), "beta");

    await sim.run(handler, START + 72 * HOUR);

    const midnight = Date.UTC(2026, 2, 2);
    expect(sim.deadLetters).toEqual([]);
    expect(model.calls).toBeGreaterThan(0);
    // Every receive before midnight was a pause, with no call and no attempt used.
    const beforeMidnight = sim.receives.filter((r) => r.at < midnight);
    expect(beforeMidnight.length).toBeGreaterThanOrEqual(2 * 18);
    expect(metrics.get("BudgetPauses")).toBe(beforeMidnight.length);
    expect(metrics.get("ExtractionFailures")).toBeUndefined();
    expect(ledger.attemptsOf("alpha", "a1")).toBe(0);
    // Resumed by itself at the next UTC day.
    expect(Math.min(...sim.receives.filter((r) => r.at >= midnight).map((r) => r.at))).toBe(
      midnight,
    );
    expect((await store.getResult("alpha", "a1"))?.usage.inputTokens).toBeGreaterThan(0);
    expect(await ledger.spent(DEPLOYMENT_PARTITION, "2026-03-02")).toBeGreaterThan(0);
  });

  it("resumes within the longest delay once the budget is raised", async () => {
    const sim = simulation();
    let daily = 1000;
    const ledger = new MemoryLedger();
    await ledger.add(DEPLOYMENT_PARTITION, utcDay(START), 1000);
    const budget = {
      check: (channel: string) =>
        new TokenBudget({ counter: ledger, daily, now: () => sim.now }).check(channel),
    };
    await expect(budget.check("alpha")).rejects.toMatchObject({
      name: "BudgetPausedError",
      code: "KNOWLEDGE_BUDGET_PAUSED",
    });
    daily = 2000;
    await expect(budget.check("alpha")).resolves.toBeUndefined();
  });
});

describe("the dead-letter message", () => {
  it("carries the segment as it came and why it was given up on, never message text", async () => {
    const sim = simulation();
    const { handler } = deployment(sim, {
      down: () => true,
      retry: { baseDelaySeconds: 1, maxDelaySeconds: 2, maxAttempts: 2 },
    });
    const sent: unknown[] = [];
    const original = sim.sqs.send.bind(sim.sqs);
    sim.sqs.send = (async (command: { input?: unknown }) => {
      sent.push(command.input);
      return original(command as never);
    }) as never;
    sim.send("a1", body("alpha", "a1"), "alpha");

    await sim.run(handler, START + HOUR);

    const dead = sent.find((input) => (input as { QueueUrl?: string }).QueueUrl === DLQ_URL);
    expect(dead).toMatchObject({
      MessageBody: body("alpha", "a1"),
      MessageGroupId: "alpha",
      MessageDeduplicationId: "a1",
      MessageAttributes: {
        [GAVE_UP_ATTRIBUTE]: {
          DataType: "String",
          StringValue: "2 attempts; last LLMError EXTRACTION_LLM_FAILED",
        },
      },
    });
  });
});
