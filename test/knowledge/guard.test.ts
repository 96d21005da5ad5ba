import type { Context } from "aws-lambda";
import { Analyzer, InvalidModelOutputError, type LLM, LLMError } from "convoseg/extraction";
import {
  BudgetPausedError,
  CircuitOpenError,
  DeadlineError,
  SegmentBusyError,
} from "convoseg/knowledge";
import { MemoryLedger, MemoryResultStore } from "convoseg/knowledge/store";
import {
  apiKeyCache,
  CircuitBreaker,
  guardedLLM,
  retryDelaySeconds,
  rideOutSeconds,
  SegmentExtractor,
  segmentConsumer,
  TokenBudget,
} from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { DEPLOYMENT_PARTITION } from "../../lib/knowledge/store/schema/items.js";
import { DLQ_URL, QueueSimulation } from "./queue-simulation.js";

const USAGE = { inputTokens: 700, outputTokens: 300, cacheReadTokens: 50, cacheWriteTokens: 0 };
const answering: LLM = {
  async chatJSON(_messages, options) {
    options?.onUsage?.(USAGE, { model: "m", latencyMs: 1 });
    return { candidates: [] };
  },
};
const failing = (error: Error): LLM => ({
  async chatJSON() {
    throw error;
  },
});
/** What `promise` rejects with (it must reject). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}
const unavailable = new LLMError("503 (maxRetries 3)", true, 503);

describe("the circuit breaker", () => {
  it("opens after N provider failures in a row, refuses calls for the cool-down, then lets one try", async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 3, cooldownMs: 60_000, now: () => now });
    let opened = 0;
    const calls = { n: 0 };
    const llm = guardedLLM(
      {
        async chatJSON() {
          calls.n++;
          throw unavailable;
        },
      },
      { breaker, channel: "c", onOpen: () => opened++ },
    );
    for (let i = 0; i < 3; i++) await expect(llm.chatJSON([])).rejects.toBe(unavailable);
    expect(breaker.open).toBe(true);
    expect(opened).toBe(1);
    const refused = (await rejection(llm.chatJSON([]))) as CircuitOpenError;
    expect(refused).toBeInstanceOf(CircuitOpenError);
    expect(refused.closesAt).toBe(60_000);
    expect(calls.n).toBe(3);

    now = 60_000;
    // Half open: one call tries, and its failure opens the breaker again at once.
    await expect(llm.chatJSON([])).rejects.toBe(unavailable);
    expect(calls.n).toBe(4);
    expect(breaker.open).toBe(true);
    expect(opened).toBe(2);
  });

  it("is closed by a success, and not opened by aborts, bad requests or invalid replies", async () => {
    const breaker = new CircuitBreaker({ failures: 2 });
    const aborted = new LLMError("aborted", false, undefined, { kind: "aborted" });
    const badRequest = new LLMError("400", false, 400);
    const invalid = new InvalidModelOutputError("not JSON", "x");
    for (const error of [aborted, badRequest, invalid, aborted, badRequest]) {
      await guardedLLM(failing(error), { breaker, channel: "c" })
        .chatJSON([])
        .catch(() => {});
    }
    expect(breaker.open).toBe(false);
    await guardedLLM(failing(unavailable), { breaker, channel: "c" })
      .chatJSON([])
      .catch(() => {});
    await guardedLLM(answering, { breaker, channel: "c" }).chatJSON([]);
    await guardedLLM(failing(unavailable), { breaker, channel: "c" })
      .chatJSON([])
      .catch(() => {});
    expect(breaker.open).toBe(false);
  });

  it("counts 401 and 403 as provider failures and reports them (to read the key again)", async () => {
    const breaker = new CircuitBreaker({ failures: 2 });
    const refused: LLMError[] = [];
    for (const status of [401, 403]) {
      await guardedLLM(failing(new LLMError(`${status}`, false, status)), {
        breaker,
        channel: "c",
        onAuthFailure: (e) => refused.push(e),
      })
        .chatJSON([])
        .catch(() => {});
    }
    expect(refused.map((e) => e.status)).toEqual([401, 403]);
    expect(breaker.open).toBe(true);
  });
});

describe("the daily token budget", () => {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const noon = Date.UTC(2026, 4, 1, 12);

  it("counts input and output tokens per day, for the deployment and the channel", async () => {
    const ledger = new MemoryLedger();
    const budget = new TokenBudget({
      counter: ledger,
      daily: 5000,
      perChannel: 2000,
      now: () => noon,
    });
    const llm = guardedLLM(answering, { budget, channel: "alpha" });
    await llm.chatJSON([]);
    await llm.chatJSON([]);
    expect(await ledger.spent(DEPLOYMENT_PARTITION, day(noon))).toBe(2000);
    expect(await ledger.spent("alpha", day(noon))).toBe(2000);
    // The channel's budget is spent; the deployment's, and other channels', are not.
    const refused = (await rejection(llm.chatJSON([]))) as BudgetPausedError;
    expect(refused).toBeInstanceOf(BudgetPausedError);
    expect(refused).toMatchObject({ scope: "channel", resumesAt: Date.UTC(2026, 4, 2) });
    expect(refused.message).toMatch(
      /channelDailyTokenBudget 2000\) is spent \(2000 tokens today\)/,
    );
    await guardedLLM(answering, { budget, channel: "beta" }).chatJSON([]);
  });

  it("pauses every channel once the deployment's is spent, and resumes the next UTC day", async () => {
    const ledger = new MemoryLedger();
    let now = noon;
    const budget = new TokenBudget({ counter: ledger, daily: 1000, now: () => now });
    const calls = { n: 0 };
    const llm = guardedLLM(
      {
        async chatJSON(messages, options) {
          calls.n++;
          return answering.chatJSON(messages, options);
        },
      },
      { budget, channel: "any" },
    );
    await llm.chatJSON([]);
    await expect(llm.chatJSON([])).rejects.toMatchObject({
      name: "BudgetPausedError",
      scope: "deployment",
    });
    expect(calls.n).toBe(1);
    now = Date.UTC(2026, 4, 2);
    await llm.chatJSON([]);
    expect(calls.n).toBe(2);
  });

  it("keeps a paid reply when its tokens could not be counted", async () => {
    const counter = {
      spent: async () => 0,
      add: async () => {
        throw new Error("throttled");
      },
    };
    const errors: unknown[] = [];
    const llm = guardedLLM(answering, {
      budget: new TokenBudget({ counter, daily: 1000 }),
      channel: "c",
      onCountError: (e) => errors.push(e),
    });
    await expect(llm.chatJSON([])).resolves.toEqual({ candidates: [] });
    expect(errors).toHaveLength(1);
  });
});

describe("retry delays", () => {
  it("double from 30 s per failed attempt up to an hour, and ride out more than 6 hours", () => {
    expect([1, 2, 3, 7, 8, 16].map((n) => retryDelaySeconds(unavailable, n, 0))).toEqual([
      30, 60, 120, 1920, 3600, 3600,
    ]);
    expect(rideOutSeconds()).toBeGreaterThan(6 * 3600);
    expect(rideOutSeconds()).toBe(3810 + 8 * 3600);
  });

  it("wait out what a wait waits for, and a refused key the longest delay", () => {
    expect(retryDelaySeconds(new SegmentBusyError("s", 45_500), 0, 1_000)).toBe(45);
    expect(retryDelaySeconds(new SegmentBusyError("s", 0), 0, 1_000)).toBe(1);
    expect(retryDelaySeconds(new CircuitOpenError(5, 120_000), 0, 0)).toBe(120);
    const midnight = Date.UTC(2026, 0, 2);
    const paused = new BudgetPausedError("deployment", 1, 1, midnight);
    expect(retryDelaySeconds(paused, 0, midnight - 600_000)).toBe(600);
    expect(retryDelaySeconds(paused, 0, midnight - 10 * 3_600_000)).toBe(3600);
    expect(retryDelaySeconds(new DeadlineError("s"), 0, 0)).toBe(30);
    expect(retryDelaySeconds(new LLMError("401", false, 401), 1, 0)).toBe(3600);
  });
});

describe("the API key cache", () => {
  it("reads again after a failed read instead of keeping the rejection", async () => {
    const answers: (() => Promise<unknown>)[] = [
      async () => {
        throw Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
      },
      async () => "sk-1",
    ];
    let reads = 0;
    const key = apiKeyCache(() => answers[reads++](), { where: "secret arn:x" });
    await expect(key.get()).rejects.toThrow(
      "could not read the OpenAI API key at secret arn:x: ThrottlingException: Rate exceeded (it is read again by the next call)",
    );
    await expect(key.get()).resolves.toBe("sk-1");
    expect(reads).toBe(2);
  });

  it("keeps the key for its cache age, and reads it again once invalidated", async () => {
    let now = 0;
    let reads = 0;
    const key = apiKeyCache(async () => `sk-${++reads}`, {
      where: "parameter /k",
      maxAgeMs: 1000,
      now: () => now,
    });
    expect(await key.get()).toBe("sk-1");
    expect(await key.get()).toBe("sk-1");
    now = 1000;
    expect(await key.get()).toBe("sk-2");
    key.invalidate();
    expect(await key.get()).toBe("sk-3");
  });

  it("refuses an empty key, naming where it is kept", async () => {
    await expect(apiKeyCache(async () => "", { where: "parameter /k" }).get()).rejects.toThrow(
      "the OpenAI API key at parameter /k is empty or not a string",
    );
  });
});

describe("the consumer's waits and deadline", () => {
  function consumer(llm: LLM, store = new MemoryResultStore(), extra: object = {}) {
    const sim = new QueueSimulation(Date.UTC(2026, 0, 1), {
      maxReceiveCount: 1000,
      visibilityTimeoutSeconds: 5400,
    });
    const ledger = new MemoryLedger();
    const metrics = new Map<string, number>();
    const quiet = () => {};
    const handler = segmentConsumer({
      extractor: new SegmentExtractor({
        store,
        extractor: new Analyzer(llm, { route: "full" }),
        model: "m",
        promptVersion: "p",
        now: () => sim.now,
      }),
      messages: { get: async () => [] } as never,
      messagesTable: "messages",
      metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
      logger: { info: quiet, warn: quiet, error: quiet },
      sqs: sim.sqs,
      attempts: ledger,
      deadLetterQueueUrl: DLQ_URL,
      now: () => sim.now,
      ...extra,
    });
    return { handler, ledger, metrics, sim };
  }
  const segment = JSON.stringify({
    v: 1,
    segmentId: "s1",
    channel: "c",
    late: false,
    belongsAfter: null,
    count: 1,
    first: { id: "m0", ts: 1 },
    last: { id: "m0", ts: 1 },
    messageIds: ["m0"],
    messages: [{ id: "m0", ts: 1, author: "a", text: "hello" }],
  });

  it("does not count a busy segment as an attempt, and waits until the other lease ends", async () => {
    const store = new MemoryResultStore();
    const { handler, ledger, metrics, sim } = consumer(answering, store);
    await store.acquireLease("c", "s1", {
      owner: "other",
      now: sim.now,
      leaseMs: 600_000,
      expiresAt: sim.now + 86_400_000,
    });
    sim.send("r1", segment, "c");

    await sim.run(handler, sim.now);

    expect(ledger.attemptsOf("c", "s1")).toBe(0);
    expect(metrics.get("SegmentWaits")).toBe(1);
    expect(metrics.get("ExtractionFailures")).toBeUndefined();
    await sim.run(handler, sim.now + 600_000 + 1000);
    expect(sim.pending).toBe(0);
  });

  it("aborts a model call at the remaining time less the margin: the record fails cleanly", async () => {
    const hanging: LLM = {
      chatJSON: (_messages, options) =>
        new Promise((_, reject) => {
          options?.signal?.addEventListener("abort", () =>
            reject(
              new LLMError("aborted", false, undefined, {
                kind: "aborted",
                cause: options.signal?.reason,
              }),
            ),
          );
        }),
    };
    const store = new MemoryResultStore();
    const { handler, ledger, sim } = consumer(hanging, store, { deadlineMarginMs: 10_000 });
    sim.send("r1", segment, "c");
    const context = { getRemainingTimeInMillis: () => 10_050 } as Context;

    await sim.run((event) => handler(event, context), sim.now);

    // Failed, counted, its lease given up (the next delivery may take it at once).
    expect(ledger.attemptsOf("c", "s1")).toBe(1);
    await expect(
      store.acquireLease("c", "s1", { owner: "next", now: sim.now, leaseMs: 1, expiresAt: 1 }),
    ).resolves.toMatchObject({ owner: "next" });
    expect(sim.pending).toBe(1);
  });

  it("leaves a record not started before the deadline for the next invocation, not counted", async () => {
    const { handler, ledger, metrics, sim } = consumer(answering, undefined, {
      deadlineMarginMs: 10_000,
    });
    sim.send("r1", segment, "c");
    const context = { getRemainingTimeInMillis: () => 5_000 } as Context;

    await sim.run((event) => handler(event, context), sim.now);

    expect(sim.pending).toBe(1);
    expect(ledger.attemptsOf("c", "s1")).toBe(0);
    expect(metrics.get("SegmentWaits")).toBe(1);
    expect(metrics.get("LLMCalls")).toBeUndefined();
  });
});
