/**
 * Erasing a person on the memory stores: their messages deleted, nothing derived cites them or
 * names them, everyone else's data untouched, an audit item that says who asked and what went;
 * a dry run that changes nothing; a run stopped early, or crashed after any store call, that the
 * next run finishes in the state of a run that never stopped.
 */

import {
  auditKeyOf,
  type EraseRequest,
  ErasureError,
  ErasureScopeError,
  eraseRequestOf,
  eraseUser,
  MemoryAuditStore,
  MemoryDigestArchive,
} from "convoseg/erasure";
import type { LLM } from "convoseg/extraction";
import { MemoryStore } from "convoseg/history";
import { mentions } from "convoseg/history/changes";
import { authorKeyOf, userIdKeyOf } from "convoseg/history/schema";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { correctQuestion } from "convoseg/knowledge/write";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { questionModel } from "../../knowledge/redaction.js";
import { type CrashControl, crashing, InjectedCrash } from "../../support/crash.js";
import { AUDIT_SECRET, buildWorld, erasureDependencies, type World } from "./world.js";

/**
 * With `ids`, carol's messages are a Slack-like platform's: user id U3, display name "carol",
 * every other one (`half`) stored without the id, as an importer before ids stored them.
 */
async function setUp(
  channels = 3,
  segments = 2,
  ids?: "all" | "half",
  llm?: LLM,
  channelName?: (c: number) => string,
) {
  const history = new MemoryStore();
  const results = new MemoryResultStore();
  const audits = new MemoryAuditStore();
  const userId =
    ids === undefined
      ? undefined
      : (author: string, i: number) =>
          author === "carol" && (ids === "all" || i % 2 === 0) ? "U3" : undefined;
  const world = await buildWorld(history, results, {
    channels,
    segments,
    userId,
    llm,
    channelName,
  });
  return { history, results, audits, world };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** Everything stored, as JSON: messages (deleted ones as the store keeps them) and results. */
async function dump({ history, results, world }: Setup): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const channel of world.channels) {
    const ids = (world.written.get(channel) ?? []).map((m) => m.id);
    out[channel] = {
      messages: await history.getMessages(channel, ids),
      results: await results.listResults(channel),
      supports: await results.listSupports(channel),
      windows: [...results.listWindows(channel)],
    };
  }
  return out;
}

/** An author key as the audit item holds it: hashed with the deployment's secret. */
const keyed = (authorKey: string) => auditKeyOf(AUDIT_SECRET, authorKey);

const of = (world: World, author: string) =>
  [...world.written.values()].flat().filter((m) => m.author === author);

describe("eraseUser", () => {
  it("deletes every message of the person, and leaves nothing derived that cites or names them", async () => {
    const setup = await setUp();
    const { history, results, audits, world } = setup;
    const before = await dump(setup);
    const outcome = await eraseUser(erasureDependencies(history, results, audits), {
      user: "alice",
      allChannels: true,
      requestedBy: "ops: ticket 42",
    });
    expect(outcome.done).toBe(true);
    const alice = of(world, "alice");
    expect(outcome.counts.messages).toBe(alice.length);
    const after = await dump(setup);
    const text = JSON.stringify(after);
    expect(text).not.toMatch(/alice/);
    // A deleted message keeps its id and time (its key and position), nothing it said.
    for (const m of alice) expect(text).not.toContain(m.text);
    // Every message id a result or topic entry cites is a message still there.
    for (const channel of world.channels) {
      const gone = new Set(
        alice.filter((m) => world.written.get(channel)?.includes(m)).map((m) => m.id),
      );
      for (const result of await results.listResults(channel)) {
        for (const id of result.messageIds ?? []) expect(gone.has(id)).toBe(false);
        for (const c of result.candidates)
          for (const id of c.messageIds ?? []) expect(gone.has(id)).toBe(false);
      }
      for (const s of await results.listSupports(channel)) {
        for (const id of s.messageIds ?? []) expect(gone.has(id)).toBe(false);
      }
    }
    // The others' messages are as they were.
    for (const channel of world.channels) {
      const kept = (world.written.get(channel) ?? []).filter((m) => m.author !== "alice");
      const stored = await history.getMessages(
        channel,
        kept.map((m) => m.id),
      );
      const earlier = (before[channel] as { messages: unknown[] }).messages.filter(
        (m) => (m as { author?: string }).author !== "alice",
      );
      expect(stored).toEqual(earlier);
    }
    // Hashing a list of names finds no audit item: its keys are hashed with the secret too.
    expect(await audits.list(authorKeyOf("alice"))).toEqual([]);
    const [audit] = await audits.list(keyed(authorKeyOf("alice")));
    expect(audit?.authorKey).not.toBe(authorKeyOf("alice"));
    expect(audit).toMatchObject({
      authorKey: keyed(authorKeyOf("alice")),
      channels: null,
      requestedBy: "ops: ticket 42",
      state: "finished",
      runs: 1,
      batch: [],
      counts: { messages: alice.length },
    });
    expect(audit.counts.results).toBeGreaterThan(0);
    expect(JSON.stringify(audits.all())).not.toMatch(/alice/);
  });

  it("is safe to repeat: a second erasure finds nothing, changes nothing, and records nothing new", async () => {
    const setup = await setUp(2, 1);
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    await eraseUser(deps, { user: "bob", allChannels: true, requestedBy: "ops" });
    const once = await dump(setup);
    const again = await eraseUser(
      { ...deps, now: () => (deps.now?.() ?? 0) + 1 },
      { user: "bob", allChannels: true, requestedBy: "ops" },
    );
    expect(again.counts.messages).toBe(0);
    expect(await dump(setup)).toEqual(once);
    // The finished erasure answers; nothing new is recorded.
    expect(again.audit).toEqual((await setup.audits.list(keyed(authorKeyOf("bob"))))[0]);
    expect((await setup.audits.list(keyed(authorKeyOf("bob")))).map((a) => a.state)).toEqual([
      "finished",
    ]);
    // Someone with nothing stored gets an audit item that says so.
    const nobody = await eraseUser(deps, { user: "nobody", allChannels: true, requestedBy: "ops" });
    expect(nobody.audit).toMatchObject({ state: "finished", counts: { messages: 0 } });
  });

  it("erases only in the channels given", async () => {
    const setup = await setUp(3, 1);
    const [first, second, third] = setup.world.channels;
    const before = await dump(setup);
    const outcome = await eraseUser(
      erasureDependencies(setup.history, setup.results, setup.audits),
      { user: "alice", channels: [third, first], requestedBy: "ops" },
    );
    const after = await dump(setup);
    expect(after[second]).toEqual(before[second]);
    expect(JSON.stringify([after[first], after[third]])).not.toMatch(/alice/);
    expect(outcome.audit?.channels).toEqual([first, third].sort());
    expect(outcome.counts.messages).toBe(
      of(setup.world, "alice").filter((m) => !setup.world.written.get(second)?.includes(m)).length,
    );
  });

  it("removes a candidate whose own words name the person, and their name from authors", async () => {
    const setup = await setUp(1, 1);
    const [channel] = setup.world.channels;
    const before = await setup.results.listResults(channel);
    expect(before[0].candidates.map((c) => c.topic)).toContain("carol");
    await eraseUser(erasureDependencies(setup.history, setup.results, setup.audits), {
      user: "carol",
      allChannels: true,
      requestedBy: "ops",
    });
    const [result] = await setup.results.listResults(channel);
    expect(result.candidates.map((c) => c.topic)).not.toContain("carol");
    expect(JSON.stringify(await dump(setup))).not.toMatch(/carol/i);
    expect(mentions("thanks Carol!", "carol")).toBe(true);
    expect(mentions("caroline", "carol")).toBe(false);
  });

  it("counts the questions it removes: those the person asked, by the redaction or the scrub", async () => {
    // Channel 0's segment: alice asks "anyone around?" (m3) and answers carol's wifi question
    // (m6, asked by m5).
    const setup = await setUp(1, 1, "all", questionModel);
    const [channel] = setup.world.channels;
    const askers = async () =>
      (await setup.results.listResults(channel))
        .flatMap((r) => r.questions ?? [])
        .map((q) => q.askedBy);
    expect(await askers()).toEqual(["alice", "carol"]);
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    // By name: the redaction of her deleted messages removes her question (the answer she gave
    // leaves carol's, unclear).
    const alice = await eraseUser(deps, { user: "alice", allChannels: true, requestedBy: "ops" });
    expect(alice.counts).toMatchObject({ questionsRemoved: 1 });
    expect(alice.audit?.counts.questionsRemoved).toBe(1);
    expect(await askers()).toEqual(["carol"]);
    // By user id: the scrub of the name her messages carried removes it before their deletion.
    const carol = await eraseUser(deps, { userId: "U3", requestedBy: "ops" });
    expect(carol.counts).toMatchObject({ questionsRemoved: 1 });
    expect(await askers()).toEqual([]);
  });

  it("counts in a dry run and changes nothing, audit included", async () => {
    const setup = await setUp(2, 2);
    const before = await dump(setup);
    const outcome = await eraseUser(
      erasureDependencies(setup.history, setup.results, setup.audits),
      { user: "alice", requestedBy: "ops", dryRun: true },
    );
    const alice = of(setup.world, "alice");
    expect(outcome).toMatchObject({ done: true, dryRun: true, counts: { messages: alice.length } });
    expect(Object.values(outcome.byChannel ?? {}).reduce((a, b) => a + b, 0)).toBe(alice.length);
    expect(await dump(setup)).toEqual(before);
    expect(setup.audits.all()).toEqual([]);
  });

  it("stops between pages when told to, and the next run resumes where it stopped", async () => {
    const setup = await setUp(2, 2);
    let pages = 0;
    const deps = erasureDependencies(setup.history, setup.results, setup.audits, {
      pageSize: 2,
      shouldStop: () => pages++ === 3,
    });
    const first = await eraseUser(deps, { user: "alice", allChannels: true, requestedBy: "ops" });
    expect(first.done).toBe(false);
    expect(first.audit?.state).toBe("started");
    const second = await eraseUser(
      { ...deps, shouldStop: undefined },
      {
        user: "alice",
        allChannels: true,
        requestedBy: "someone else",
      },
    );
    expect(second.done).toBe(true);
    expect(second.audit).toMatchObject({ runs: 2, requestedBy: "ops", state: "finished" });
    expect(second.counts.messages).toBe(of(setup.world, "alice").length);
  });

  it("refuses another scope while an erasure of the person is unfinished, and bad requests", async () => {
    const setup = await setUp(2, 1);
    const deps = erasureDependencies(setup.history, setup.results, setup.audits, {
      shouldStop: () => true,
    });
    await eraseUser(deps, { user: "alice", allChannels: true, requestedBy: "ops" });
    const error = await eraseUser(deps, {
      user: "alice",
      channels: [setup.world.channels[0]],
      requestedBy: "ops",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErasureError);
    expect(error).toMatchObject({ code: "ERASURE_IN_PROGRESS", name: "ErasureError" });
    for (const [request, field] of [
      [{ user: "", requestedBy: "ops" }, "user"],
      [{ requestedBy: "ops" }, "user"],
      [{ userId: "", requestedBy: "ops" }, "userId"],
      [{ user: "a", requestedBy: " " }, "requestedBy"],
      [{ user: "a", requestedBy: "ops", channels: [] }, "channels"],
      [{ user: "a", requestedBy: "ops", channels: ["c"], allChannels: true }, "allChannels"],
    ] as const) {
      await expect(eraseUser(deps, request)).rejects.toMatchObject({
        code: "ERASURE_INVALID_REQUEST",
        field,
      });
    }
  });
});

describe("the stored digests", () => {
  it("lose every version of each period that cites the person's messages or names them", async () => {
    const setup = await setUp(2, 1);
    const digests = new MemoryDigestArchive();
    const [aliceMessage] = of(setup.world, "alice");
    const [bobMessage] = of(setup.world, "bob");
    const period = (day: string, json: unknown) => {
      // A rerun of the period overwrites its files: a second version of each.
      for (let run = 0; run < 2; run++) {
        digests.put(`digests/${day}/digest.json`, JSON.stringify(json));
        digests.put(`digests/${day}/digest.md`, `# Digest ${day}`);
        digests.put(`digests/${day}/digest.html`, `<h1>Digest ${day}</h1>`);
      }
    };
    period("2025-01-06", { unanswered: [{ question: "q", messageIds: [aliceMessage?.id] }] });
    period("2025-01-13", { unanswered: [{ question: "as Alice said, why?", messageIds: ["x"] }] });
    period("2025-01-20", { unanswered: [{ question: "q", messageIds: [bobMessage?.id] }] });
    const deps = { ...erasureDependencies(setup.history, setup.results, setup.audits), digests };
    await eraseUser(deps, { user: "alice", allChannels: true, requestedBy: "ops" });
    expect([...new Set(digests.all().map((d) => d.key))]).toEqual([
      "digests/2025-01-20/digest.json",
      "digests/2025-01-20/digest.md",
      "digests/2025-01-20/digest.html",
    ]);
    expect(digests.all()).toHaveLength(6);
    expect(JSON.stringify(digests.all())).not.toMatch(/alice/i);
  });
});

describe("erasing by display name alone", () => {
  it("names the channels it would touch and erases nothing, until the channels or all are said", async () => {
    const setup = await setUp(3, 1);
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    const before = await dump(setup);
    const error = await eraseUser(deps, { user: "alice", requestedBy: "ops" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ErasureScopeError);
    const perChannel: Record<string, number> = {};
    for (const [channel, messages] of setup.world.written) {
      const n = messages.filter((m) => m.author === "alice").length;
      if (n > 0) perChannel[channel] = n;
    }
    expect(error).toMatchObject({ code: "ERASURE_SCOPE_UNSAID", byChannel: perChannel });
    expect((error as Error).message).toContain(
      `it would touch ${Object.keys(perChannel).length} channels (${Object.keys(perChannel)
        .map((c) => JSON.stringify(c))
        .join(", ")})`,
    );
    expect(await dump(setup)).toEqual(before);
    expect(await setup.audits.list(keyed(authorKeyOf("alice")))).toEqual([]);
    // A name nobody carries touches nothing: nothing to refuse.
    await expect(eraseUser(deps, { user: "nobody", requestedBy: "ops" })).resolves.toMatchObject({
      counts: { messages: 0 },
    });
    const erased = await eraseUser(deps, { user: "alice", allChannels: true, requestedBy: "ops" });
    expect(erased.counts.messages).toBe(of(setup.world, "alice").length);
  });
});

describe("erasing by platform user id", () => {
  it("finds a person's messages by their userId, and removes the display names they carried", async () => {
    const setup = await setUp(2, 2, "all");
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    const carol = of(setup.world, "carol");
    expect(JSON.stringify(await dump(setup))).toMatch(/"U3"/);
    const outcome = await eraseUser(deps, { userId: "U3", requestedBy: "dpo" });
    expect(outcome).toMatchObject({ done: true, counts: { messages: carol.length } });
    const text = JSON.stringify(await dump(setup));
    // Neither the id nor the display name (author lists, a topic naming her) is left; the
    // others' words that mention her ("thanks #carol") are theirs.
    expect(text).not.toMatch(/U3/);
    expect(text).not.toMatch(/"carol"/i);
    for (const m of carol) expect(text).not.toContain(m.text);
    expect(outcome.audit).toMatchObject({ authorKey: keyed(userIdKeyOf("U3")), state: "finished" });
    expect(JSON.stringify(setup.audits.all())).not.toMatch(/U3|carol/);
  });

  it("given only the display name, leaves the messages stored with a userId (a name is not an identity)", async () => {
    const setup = await setUp(2, 1, "all");
    const before = await dump(setup);
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    const outcome = await eraseUser(deps, { user: "carol", allChannels: true, requestedBy: "dpo" });
    expect(outcome.counts.messages).toBe(0);
    expect(await dump(setup)).toEqual(before);
    expect(outcome.audit).toMatchObject({
      authorKey: keyed(authorKeyOf("carol")),
      state: "finished",
    });
  });

  it("with both, erases the messages stored with the id and those stored by name without one", async () => {
    const setup = await setUp(2, 2, "half");
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    const carol = of(setup.world, "carol");
    const withId = [...setup.world.userIds.values()].length;
    expect(withId).toBeGreaterThan(0);
    expect(withId).toBeLessThan(carol.length);
    const byId = await eraseUser(deps, { userId: "U3", requestedBy: "dpo", dryRun: true });
    expect(byId.counts.messages).toBe(withId);
    const both = await eraseUser(deps, { userId: "U3", user: "carol", requestedBy: "dpo" });
    expect(both.counts.messages).toBe(carol.length);
    expect(JSON.stringify(await dump(setup))).not.toMatch(/U3|"carol"/i);
    expect(both.audit).toMatchObject({ nameKey: keyed(authorKeyOf("carol")), state: "finished" });
    // Another scope of the same person is another erasure: by id alone now finds nothing.
    const later = { ...deps, now: () => (deps.now?.() ?? 0) + 1 };
    const again = await eraseUser(later, { userId: "U3", requestedBy: "dpo" });
    expect(again.counts.messages).toBe(0);
  });
});

describe("a person who corrected questions where they never wrote", () => {
  /** Marks the channel's question starting with `question` answered, `by` someone. */
  async function mark(setup: Setup, channel: string, question: string, by: string) {
    const { entries } = await setup.results.listQuestions(channel, { limit: 10 });
    const entry = entries.find((e) => e.question.startsWith(question));
    const answerId = (setup.world.written.get(channel) ?? [])[6].id;
    await correctQuestion(setup.results, {
      channel,
      questionId: String(entry?.id),
      action: "answered",
      answerId,
      by,
    });
  }
  const byOf = async (setup: Setup, channel: string) =>
    (await setup.results.listCorrections(channel)).map((c) => [c.action, c.by ?? null]).sort();

  it("is forgotten as corrector in every channel of the scope, by user id or the name given, and no other", async () => {
    const setup = await setUp(3, 1, undefined, questionModel);
    const [first, second, third] = setup.world.channels;
    await mark(setup, first, "Which wifi", "UDANA");
    // An operator's `questions mark --by` with her name, in another case; someone else's.
    await mark(setup, second, "Which wifi", "Dana");
    await mark(setup, second, "anyone around", "UERIN");
    await mark(setup, third, "Which wifi", "UDANA");
    const deps = erasureDependencies(setup.history, setup.results, setup.audits);
    const request = { userId: "UDANA", user: "dana", requestedBy: "dpo" };

    const scoped = await eraseUser(deps, { ...request, channels: [first] });
    expect(scoped).toMatchObject({ done: true, counts: { messages: 0 } });
    expect(await byOf(setup, first)).toEqual([["answered", null]]);
    expect(await byOf(setup, third)).toEqual([["answered", "UDANA"]]);

    await eraseUser({ ...deps, now: () => (deps.now?.() ?? 0) + 1 }, request);
    // Kept, without her: the question stays answered by the message she chose.
    expect(await byOf(setup, second)).toEqual([
      ["answered", null],
      ["answered", "UERIN"],
    ]);
    expect(await byOf(setup, third)).toEqual([["answered", null]]);
    const [kept] = await setup.results.listCorrections(third);
    expect(kept.answerId).toBe((setup.world.written.get(third) ?? [])[6].id);
    expect(JSON.stringify(await dump(setup))).not.toMatch(/dana/i);
  });
});

/** The first channel is named after carol, as a private chat with her is. */
const named = (c: number) => (c === 0 ? "carol" : `chan${c}`);

describe("an erasure that crashes after any store call", () => {
  it("ends, once run again, in the state of one that never crashed", async () => {
    const reference = new Map<string, unknown>();
    await fc.assert(
      fc.asyncProperty(
        // carol: half her messages stored with user id U3; by id, and by id and name at once.
        fc.constantFrom<EraseRequest>(
          { user: "alice", allChannels: true, requestedBy: "ops" },
          { user: "bob", allChannels: true, requestedBy: "ops" },
          { userId: "U3", requestedBy: "ops" },
          { userId: "U3", user: "carol", requestedBy: "ops" },
        ),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 100_000 }),
        async (request, pageSize, point) => {
          const key = `${JSON.stringify(request)} ${pageSize}`;
          if (!reference.has(key)) {
            // A run that never crashes, counting its calls: a crash point is one of them.
            const clean = await setUp(2, 2, "half", undefined, named);
            const counter: CrashControl = { calls: 0, crashAt: 0 };
            await eraseUser(
              erasureDependencies(
                crashing(clean.history, counter),
                crashing(clean.results, counter),
                crashing(clean.audits, counter),
                { pageSize },
              ),
              request,
            );
            const end = await endState(clean, request);
            // Erasing carol takes the channel's name that is hers off every message.
            expect(JSON.stringify(end).includes('"channelName":"carol"')).toBe(
              request.userId === undefined,
            );
            reference.set(key, { end, calls: counter.calls });
          }
          const { end, calls } = reference.get(key) as { end: unknown; calls: number };
          expect(calls).toBeGreaterThan(30);
          const crashAt = 1 + ((point - 1) % calls);
          const setup = await setUp(2, 2, "half", undefined, named);
          const control: CrashControl = { calls: 0, crashAt, dies: true };
          const crashed = erasureDependencies(
            crashing(setup.history, control),
            crashing(setup.results, control),
            crashing(setup.audits, control),
            { pageSize },
          );
          const first = await eraseUser(crashed, request).catch((error: unknown) => {
            if (!(error instanceof InjectedCrash)) throw error;
            return undefined;
          });
          if (first === undefined) {
            await eraseUser(
              erasureDependencies(setup.history, setup.results, setup.audits, { pageSize }),
              request,
            );
          }
          expect(first, `crash after call ${crashAt} of ${calls}`).toBeUndefined();
          expect(await endState(setup, request)).toEqual(end);
        },
      ),
      { numRuns: 100 },
    );
  });
});

/** The stores' contents and the audit's lasting facts (runs and derived counts may differ). */
async function endState(setup: Setup, request: EraseRequest) {
  const key =
    request.userId === undefined
      ? keyed(authorKeyOf(request.user ?? ""))
      : keyed(userIdKeyOf(request.userId));
  const audits = (await setup.audits.list(key)).map((a) => ({
    state: a.state,
    messages: a.counts.messages,
    requestedBy: a.requestedBy,
    batch: a.batch,
    exhausted: a.exhausted,
  }));
  return { data: await dump(setup), audits };
}

describe("the EraseUser event", () => {
  it("is checked field by field before anything is read", () => {
    expect(
      eraseRequestOf({ user: "a", requestedBy: "ops", channels: ["#c"], dryRun: true }),
    ).toEqual({ user: "a", requestedBy: "ops", channels: ["#c"], dryRun: true });
    expect(eraseRequestOf({ userId: "U1", requestedBy: "ops" })).toEqual({
      userId: "U1",
      requestedBy: "ops",
    });
    for (const [event, field] of [
      [null, "event"],
      [{ requestedBy: "ops" }, "user"],
      [{ userId: 7, requestedBy: "ops" }, "userId"],
      [{ user: "a" }, "requestedBy"],
      [{ user: "a", requestedBy: "ops", channels: "#c" }, "channels"],
      [{ user: "a", requestedBy: "ops", dryRun: "yes" }, "dryRun"],
      [{ user: "a", requestedBy: "ops", allChannels: 1 }, "allChannels"],
    ] as const) {
      expect(() => eraseRequestOf(event)).toThrow(expect.objectContaining({ field }));
    }
  });
});
