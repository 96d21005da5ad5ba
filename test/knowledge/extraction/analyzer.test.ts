/**
 * The analyzer against a scripted model (the LLM seam is the only thing faked): the original's
 * test list (`docs/specs/windows.md`, cases 8 to 30) and the decisions of the port.
 */

import {
  Analyzer,
  type AnalyzerOptions,
  type Candidate,
  dedupeCandidates,
  InvalidModelOutputError,
  type LLM,
  LLMError,
  normalizeTopic,
  type PromptTurn,
  type Turn,
} from "convoseg/extraction";
import { mapTurnRange, renderIndices, renderTurns } from "convoseg/extraction/prompts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const user = (content: string): Turn => ({ role: "user", content });
const assistant = (content: string): Turn => ({ role: "assistant", content });
const turnsFrom = (count: number) => Array.from({ length: count }, (_, i) => user(`u${i}`));
const mixTurns = (pairs: number) =>
  Array.from({ length: pairs }, (_, i) => [user(`q${i}`), assistant(`reply ${i}`)]).flat();

type Reply = unknown | ((prompt: string, call: number) => unknown);

/** A model that answers from a script and records what it was asked and how many at once. */
class ScriptedLLM implements LLM {
  readonly prompts: string[] = [];
  readonly requests: PromptTurn[][] = [];
  readonly signals: (AbortSignal | undefined)[] = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(
    private readonly reply: Reply,
    private readonly delayMs = 0,
  ) {}

  async chatJSON(messages: readonly Turn[], options?: { signal?: AbortSignal }): Promise<unknown> {
    const call = this.requests.length;
    this.requests.push([...messages] as PromptTurn[]);
    // The user message: the system prompt before it is the same for every request.
    this.prompts.push(messages.find((m) => m.role === "user")?.content ?? "");
    this.signals.push(options?.signal);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      options?.signal?.throwIfAborted();
      const value =
        typeof this.reply === "function"
          ? this.reply(messages.at(-1)?.content ?? "", call)
          : this.reply;
      if (value instanceof Error) throw value;
      return value;
    } finally {
      this.inFlight--;
    }
  }

  get calls(): number {
    return this.requests.length;
  }
}

const wire = (topic: string, fields: Record<string, unknown> = {}) => ({
  topic,
  reason: `why ${topic}`,
  confidence: 0.9,
  tags: [],
  turn_range: null,
  subjective: false,
  ...fields,
});
const topics = (candidates: Candidate[]) => candidates.map((c) => c.topic);
/** A different topic for each call, so that nothing is deduplicated away. */
const perCall = (_prompt: string, call: number) => ({ candidates: [wire(`topic ${call}`)] });

const analyze = (llm: LLM, turns: Turn[], options: AnalyzerOptions = {}) =>
  new Analyzer(llm, { prefixStep: 5, maxWindows: 8, maxConcurrency: 4, ...options }).analyze(turns);

describe("extract prompts (cases 8–10, 25, 26)", () => {
  it("passes subjective flags through and asks for the judgement", async () => {
    const llm = new ScriptedLLM([
      wire("tabs over spaces", { subjective: true }),
      wire("uses Go 1.22"),
    ]);
    const found = await analyze(llm, turnsFrom(2));
    expect(found.map((c) => c.subjective)).toEqual([true, false]);
    expect(llm.prompts[0]).toContain("subjective");
  });

  it("asks for wiki_worthy only when selective, and keeps a false verdict", async () => {
    const selective = new ScriptedLLM([wire("minor", { wiki_worthy: false })]);
    const [candidate] = await analyze(selective, turnsFrom(2), { selective: true });
    expect(selective.prompts[0]).toContain("wiki_worthy");
    expect(candidate.wikiWorthy).toBe(false);
    const plain = new ScriptedLLM([wire("minor")]);
    const [other] = await analyze(plain, turnsFrom(2));
    expect(plain.prompts[0]).not.toContain("wiki_worthy");
    expect(other.wikiWorthy).toBeUndefined();
  });

  it("asks for concrete facts and for the excerpt's language", async () => {
    const llm = new ScriptedLLM([]);
    await analyze(llm, turnsFrom(2));
    for (const phrase of [
      "specific numbers",
      "API endpoints",
      "exact commands",
      "color",
      "root cause",
    ]) {
      expect(llm.prompts[0]).toContain(phrase);
    }
    expect(llm.prompts[0]).toContain("in the language of the excerpt");
  });

  it("lists the first pass's normalized topics in the full2 second prompt (case 26)", async () => {
    const llm = new ScriptedLLM((_p: string, call: number) =>
      call === 0 ? [wire("PostgreSQL"), wire("  Go   并发 ")] : [],
    );
    await analyze(llm, turnsFrom(2), { route: "full2" });
    expect(llm.prompts[1]).toContain("postgresql");
    expect(llm.prompts[1]).toContain("go 并发");
    expect(llm.prompts[1]).toContain("do not repeat");
    expect(llm.prompts[1]).toContain("do NOT repeat any of these, even in different wording");
  });
});

describe("rendering and turn ranges (cases 12, 20–22)", () => {
  const transcript: Turn[] = [
    user("a"),
    assistant("r1"),
    user("b"),
    user("  "),
    assistant("r2"),
    { role: "tool", content: "t" },
    user("d"),
  ];

  it("maps the model's turn numbers to transcript indexes; [0,0] means none (case 12)", async () => {
    const llm = new ScriptedLLM([
      wire("ranged", { turn_range: [2, 4] }),
      wire("zero", { turn_range: [0, 0] }),
    ]);
    const found = await analyze(llm, transcript);
    expect(found.map((c) => c.turnRange)).toEqual([[1, 4], null]);
  });

  it("renders user and assistant turns, numbering only what it renders (case 20)", () => {
    const text = renderTurns(
      [{ role: "system", content: "be brief" }, user("hello"), user(" "), assistant("hi there")],
      false,
    );
    expect(text).toBe('Turn 1 [USER]: "hello"\nTurn 2 [ASSISTANT]: "hi there"');
  });

  it("renders tool output only in the full render (case 21)", () => {
    const turns = [user("compute"), { role: "tool", content: "result: 42" }, assistant("it is 42")];
    expect(renderTurns(turns, false)).not.toContain("[TOOL]");
    expect(renderTurns(turns, true)).toContain('[TOOL]: "result: 42"');
    expect(renderIndices(turns, true)).toEqual([0, 1, 2]);
    expect(renderIndices(turns, false)).toEqual([0, 2]);
  });

  it("clamps malformed ranges into ordered, in-window indexes (case 22)", () => {
    const indexes = [0, 2, 3, 5, 6];
    for (const range of [
      [1, 0],
      [2, -1],
      [-3, 5],
      [0, 3],
      [5, 2],
    ] as [number, number][]) {
      const mapped = mapTurnRange(range, indexes, 0);
      expect(mapped).not.toBeNull();
      const [start, end] = mapped as [number, number];
      expect(start).toBeGreaterThanOrEqual(0);
      expect(end).toBeGreaterThanOrEqual(start);
      expect(indexes).toContain(start);
      expect(indexes).toContain(end);
    }
    expect(mapTurnRange([0, 0], indexes, 0)).toBeNull();
    expect(mapTurnRange([2, 3], [], 0)).toBeNull();
    expect(mapTurnRange(null, indexes, 0)).toBeNull();
    // A start past the rendered turns is no range at all (the original left it unmapped).
    expect(mapTurnRange([6, 9], indexes, 0)).toBeNull();
  });

  it("gives non-prefix ranges as transcript indexes, not window ones (fixed against the original)", async () => {
    const turns = mixTurns(7);
    // The second window starts at turn 9: its "Turn 1" is the transcript's turn 9.
    const llm = new ScriptedLLM((_p: string, call: number) => [
      wire(`w${call}`, { turn_range: [1, 2] }),
    ]);
    const found = await analyze(llm, turns, { route: "non_prefix" });
    expect(found.map((c) => c.turnRange)).toEqual([
      [0, 1],
      [9, 10],
    ]);
  });

  it("gives sliding-window ranges as transcript indexes", async () => {
    const turns = mixTurns(15);
    const llm = new ScriptedLLM((_p: string, call: number) => [
      wire(`w${call}`, { turn_range: [1, 1] }),
    ]);
    const found = await analyze(llm, turns, { route: "sliding", windowSize: 20, overlap: 2 });
    expect(found.map((c) => c.turnRange?.[0])).toEqual([0, 18]);
  });
});

describe("dedupe (cases 11, 13)", () => {
  const candidate = (topic: string, fields: Partial<Candidate> = {}): Candidate => ({
    topic,
    reason: "",
    confidence: 0.5,
    tags: [],
    turnRange: null,
    subjective: false,
    ...fields,
  });

  it("merges by normalized topic: the higher confidence wins, ranges join, tags union (case 13)", () => {
    const merged = dedupeCandidates([
      candidate("PostgreSQL", { confidence: 0.9, turnRange: [1, 2], tags: ["db"] }),
      candidate("Redis"),
      candidate("postgresql", { confidence: 0.7, turnRange: [3, 4], tags: ["db", "sql"] }),
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({ topic: "PostgreSQL", confidence: 0.9, turnRange: [1, 4] });
    expect(merged[0].tags).toEqual(["db", "sql"]);
  });

  it("keeps the first defined verdict, even against a higher confidence (case 11)", () => {
    const [kept] = dedupeCandidates([
      candidate("x", { wikiWorthy: true }),
      candidate("X", { wikiWorthy: false, confidence: 0.8 }),
    ]);
    expect(kept.wikiWorthy).toBe(true);
    const [taken] = dedupeCandidates([
      candidate("x"),
      candidate("X", { wikiWorthy: false, confidence: 0.9 }),
    ]);
    expect(taken).toMatchObject({ wikiWorthy: false, topic: "X", confidence: 0.9 });
  });

  it("replaces topic and reason only on a strictly higher confidence, and never merges blank topics", () => {
    const [tie] = dedupeCandidates([
      candidate("a", { reason: "first" }),
      candidate("A", { reason: "second" }),
    ]);
    expect(tie).toMatchObject({ topic: "a", reason: "first" });
    expect(dedupeCandidates([candidate("  "), candidate("")])).toHaveLength(2);
    expect(
      dedupeCandidates([
        candidate("x", { turnRange: null }),
        candidate("x", { turnRange: [2, 3] }),
      ])[0].turnRange,
    ).toEqual([2, 3]);
  });

  it("normalizes topics: lower case, whitespace runs collapsed, trimmed", () => {
    expect(normalizeTopic("  Go \t 并发\n Model ")).toBe("go 并发 model");
  });

  const arbitraryCandidate = fc.record({
    topic: fc.constantFrom("a", "A", " a ", "b", "B b", "b  b", "", " "),
    reason: fc.string({ maxLength: 3 }),
    confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    tags: fc.array(fc.constantFrom("x", "y", "z")),
    turnRange: fc.option(
      fc
        .tuple(fc.nat(9), fc.nat(9))
        .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number]),
      { nil: null },
    ),
    subjective: fc.boolean(),
  });

  it("is idempotent and keeps the first position of each topic (property)", () => {
    fc.assert(
      fc.property(fc.array(arbitraryCandidate, { maxLength: 20 }), (list) => {
        const once = dedupeCandidates(list);
        expect(dedupeCandidates(once)).toEqual(once);
        const firsts = list.filter(
          (c, i) =>
            normalizeTopic(c.topic) === "" ||
            list.findIndex((d) => normalizeTopic(d.topic) === normalizeTopic(c.topic)) === i,
        );
        expect(once.map((c) => normalizeTopic(c.topic))).toEqual(
          firsts.map((c) => normalizeTopic(c.topic)),
        );
      }),
    );
  });
});

describe("routes and windows (cases 14–19, 23, 24, 27–30)", () => {
  it("deduplicates across prefix windows (case 14)", async () => {
    const llm = new ScriptedLLM([wire("dup")]);
    expect(await analyze(llm, turnsFrom(15))).toHaveLength(1);
    expect(llm.calls).toBe(3);
  });

  it("keeps confidences at or above 0.3 (case 15)", async () => {
    const llm = new ScriptedLLM([
      wire("high"),
      wire("edge", { confidence: 0.3 }),
      wire("low", { confidence: 0.2 }),
    ]);
    expect(topics(await analyze(llm, turnsFrom(2)))).toEqual(["high", "edge"]);
    expect(llm.calls).toBe(1);
  });

  it("merges distinct topics across windows in window order (case 16)", async () => {
    const llm = new ScriptedLLM(perCall);
    const found = await analyze(llm, turnsFrom(15));
    expect(found).toHaveLength(3);
    expect(llm.calls).toBe(3);
  });

  it("keeps the first maxCandidates of each window, in the model's order (case 17)", async () => {
    const llm = new ScriptedLLM((_p: string, call: number) => [
      wire(`first ${call}`),
      wire(`second ${call}`),
    ]);
    const found = await analyze(llm, turnsFrom(10), { maxCandidates: 1 });
    expect(llm.calls).toBe(2);
    expect(found.map((c) => c.topic.split(" ")[0])).toEqual(["first", "first"]);
  });

  it("makes no call for a window that renders nothing (case 18)", async () => {
    const turns = [...Array.from({ length: 5 }, () => user("   ")), user("hello")];
    const llm = new ScriptedLLM([wire("hello")]);
    expect(await analyze(llm, turns, { route: "non_prefix" })).toHaveLength(1);
    expect(llm.calls).toBe(1);
  });

  it("rejects when a call fails: a failure is never no candidates (case 19)", async () => {
    const llm = new ScriptedLLM(new LLMError("throttled", true, 429));
    await expect(analyze(llm, turnsFrom(2))).rejects.toBeInstanceOf(LLMError);
  });

  it.each([
    ["full", 1, 1],
    ["full2", 2, 2],
  ] as const)(
    "route %s makes %i call(s) over the whole transcript (cases 23, 27)",
    async (route, calls, found) => {
      const llm = new ScriptedLLM(perCall);
      expect(await analyze(llm, mixTurns(12), { route })).toHaveLength(found);
      expect(llm.calls).toBe(calls);
    },
  );

  it("keeps the prefix windows on the default route (case 24)", async () => {
    const llm = new ScriptedLLM(perCall);
    expect(await new Analyzer(llm).analyze(mixTurns(12))).toHaveLength(3);
    expect(llm.calls).toBe(3);
  });

  it("runs one short non-prefix window (case 28)", async () => {
    const llm = new ScriptedLLM(perCall);
    expect(await analyze(llm, mixTurns(2), { route: "non_prefix" })).toHaveLength(1);
    expect(llm.calls).toBe(1);
  });

  it("shows tool output on the prefix route only (cases 29, 30)", async () => {
    const turns = [
      user("run it"),
      { role: "tool", content: "exit status 7" },
      assistant("it failed"),
    ];
    const prefix = new ScriptedLLM([]);
    await analyze(prefix, turns, { route: "prefix" });
    expect(prefix.prompts[0]).toContain("exit status 7");
    const nonPrefix = new ScriptedLLM([]);
    await analyze(nonPrefix, turns, { route: "non_prefix" });
    expect(nonPrefix.prompts[0]).not.toContain("exit status 7");
  });

  it("cuts sliding windows of windowSize turns overlapping by overlap", async () => {
    const llm = new ScriptedLLM(perCall);
    await analyze(llm, mixTurns(25), { route: "sliding", windowSize: 20, overlap: 2 });
    expect(llm.calls).toBe(3);
  });
});

describe("options", () => {
  it("falls back to the original's defaults for missing and non-positive values", async () => {
    const llm = new ScriptedLLM(perCall, 5);
    const found = await new Analyzer(llm, {
      prefixStep: 0,
      maxWindows: -1,
      maxConcurrency: 0,
      minConfidence: -2,
    }).analyze(turnsFrom(60));
    // 12 boundaries, capped at the last 8 windows, at most 4 at once.
    expect(llm.calls).toBe(8);
    expect(found).toHaveLength(8);
    expect(llm.maxInFlight).toBeLessThanOrEqual(4);
    const filtering = new ScriptedLLM([
      wire("kept", { confidence: 0.3 }),
      wire("dropped", { confidence: 0.29 }),
    ]);
    expect(
      topics(await new Analyzer(filtering, { minConfidence: 0 }).analyze(turnsFrom(2))),
    ).toEqual(["kept"]);
  });

  it("rejects an unknown route and bad sliding settings at construction", () => {
    const llm = new ScriptedLLM([]);
    expect(() => new Analyzer(llm, { route: "diagonal" as never })).toThrow(RangeError);
    expect(() => new Analyzer(llm, { route: "sliding", windowSize: 4, overlap: 4 })).toThrow(
      RangeError,
    );
    expect(() => new Analyzer(llm, { prefixStep: 2.5 })).toThrow(RangeError);
  });

  it("gives [] for an empty transcript without a call", async () => {
    const llm = new ScriptedLLM([wire("x")]);
    expect(await new Analyzer(llm).analyze([])).toEqual([]);
    expect(llm.calls).toBe(0);
  });
});

describe("model replies", () => {
  it("takes an array or {candidates}, filling in missing optional fields", async () => {
    for (const reply of [
      [{ topic: "bare", confidence: 0.5 }],
      { candidates: [{ topic: "bare", confidence: 0.5 }] },
    ]) {
      const [candidate] = await analyze(new ScriptedLLM(reply), turnsFrom(2));
      expect(candidate).toEqual({
        topic: "bare",
        reason: "",
        confidence: 0.5,
        tags: [],
        turnRange: null,
        subjective: false,
      });
    }
  });

  it("asks once more, saying what was wrong, when a reply is not what was asked", async () => {
    const llm = new ScriptedLLM((_p: string, call: number) =>
      call === 0 ? { candidates: [{ topic: "x", confidence: 7 }] } : [wire("fixed")],
    );
    expect(topics(await analyze(llm, turnsFrom(2)))).toEqual(["fixed"]);
    expect(llm.calls).toBe(2);
    const repair = llm.requests[1];
    expect(repair.map((t) => t.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(repair[3].content).toMatch(/candidates\.0\.confidence/);
  });

  it("asks once more after a reply that is not JSON, then fails with a named error", async () => {
    const notJson = new InvalidModelOutputError("not JSON (Unexpected token)", "sure! here you go");
    const llm = new ScriptedLLM(notJson);
    const error = await analyze(llm, turnsFrom(2)).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect((error as Error).message).toContain("after one repair request");
    expect(llm.calls).toBe(2);
    expect(llm.requests[1][2]).toEqual({ role: "assistant", content: "sure! here you go" });
  });
});

describe("concurrency, failures and caching", () => {
  it("never has more than maxConcurrency calls in flight (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        async (users, limit) => {
          const llm = new ScriptedLLM(perCall, 1);
          await analyze(llm, turnsFrom(users), {
            prefixStep: 1,
            maxWindows: 100,
            maxConcurrency: limit,
          });
          expect(llm.maxInFlight).toBeLessThanOrEqual(limit);
          expect(llm.calls).toBe(users);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("aborts the calls still running when one fails", async () => {
    const llm = new ScriptedLLM(
      (_p: string, call: number) => (call === 2 ? new LLMError("boom", false) : [wire(`t${call}`)]),
      20,
    );
    await expect(
      analyze(llm, turnsFrom(30), { route: "non_prefix", prefixStep: 1, maxConcurrency: 3 }),
    ).rejects.toThrow("boom");
    expect(llm.signals.some((s) => s?.aborted)).toBe(true);
    // No window is started once one has failed.
    expect(llm.calls).toBeLessThan(30);
  });

  it("rejects when the caller aborts", async () => {
    const controller = new AbortController();
    const llm = new ScriptedLLM(perCall, 20);
    const running = new Analyzer(llm, { prefixStep: 1 }).analyze(turnsFrom(10), {
      signal: controller.signal,
    });
    const reason = new Error("caller gave up");
    setTimeout(() => controller.abort(reason), 5);
    // With the caller's own reason, and the calls in flight are told to stop.
    await expect(running).rejects.toBe(reason);
    expect(llm.signals.length).toBeGreaterThan(0);
    expect(llm.signals.every((s) => s?.aborted)).toBe(true);
    expect(llm.calls).toBeLessThan(10);
  });

  it("sends the shortest prefix window first and alone, and marks the prefix the rest share", async () => {
    let firstDone = false;
    const startedBeforeFirst: number[] = [];
    const llm = new ScriptedLLM((_p: string, call: number) => {
      if (call > 0 && !firstDone) startedBeforeFirst.push(call);
      firstDone = true;
      return [wire(`t${call}`)];
    }, 5);
    // Windows end after users 5, 10, 15 and 20, and the whole transcript (with the last reply).
    await analyze(llm, mixTurns(20), { route: "prefix", prefixStep: 5 });
    expect(llm.calls).toBe(5);
    expect(startedBeforeFirst).toEqual([]);
    const [first, ...rest] = llm.requests.map((r) => r[1]);
    const shared = first.cachePrefix ?? 0;
    // The first window's whole excerpt is the shared prefix; every later prompt starts with it.
    expect(shared).toBeGreaterThan(first.content.indexOf("Turn 1 ["));
    for (const request of rest) {
      expect(request.cachePrefix).toBe(shared);
      expect(request.content.slice(0, shared)).toBe(first.content.slice(0, shared));
    }
  });
});

describe("a window longer than the model's context", () => {
  const tooLong = () =>
    new LLMError(
      "400 This model's maximum context length is 8192 tokens (not retryable)",
      false,
      400,
    );
  /** Refuses any prompt of more than `fits` turns; else names the first turn it saw. */
  const limited = (fits: number) =>
    new ScriptedLLM((prompt: string) => {
      const shown = prompt.match(/\bu\d+\b/g) ?? [];
      if (shown.length > fits) return tooLong();
      return { candidates: [wire(`from ${shown[0]}`, { turn_range: [1, 1] })] };
    });

  it("is asked in halves, split again while too long, ranges kept as transcript indexes", async () => {
    const llm = limited(2);
    const found = await analyze(llm, turnsFrom(8), { route: "full" });
    expect(topics(found)).toEqual(["from u0", "from u2", "from u4", "from u6"]);
    expect(found.map((c) => c.turnRange)).toEqual([
      [0, 0],
      [2, 2],
      [4, 4],
      [6, 6],
    ]);
    // 8 refused, 4 refused, 4 answered, 4 refused, … : one ask of the whole, then halves.
    expect(llm.calls).toBe(1 + 2 + 4);
  });

  it("fails with the provider's error when a single turn does not fit", async () => {
    const llm = limited(0);
    await expect(analyze(llm, turnsFrom(2), { route: "full" })).rejects.toMatchObject({
      status: 400,
    });
    expect(llm.calls).toBe(2);
  });

  it("is not split for any other 400", async () => {
    const llm = new ScriptedLLM(() => new LLMError("400 unknown parameter", false, 400));
    await expect(analyze(llm, turnsFrom(8), { route: "full" })).rejects.toThrow(/unknown/);
    expect(llm.calls).toBe(1);
  });
});
