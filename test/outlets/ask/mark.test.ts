/**
 * `markAnswer` on the memory stores, telling a scripted Slack and Discord on 127.0.0.1: which
 * question a marked message answers (its thread's, the one it replies to, the model's own link,
 * its conversation's nearest), who may mark, and what the person is told, literally.
 */
import { type MarkJob, markAnswer } from "convoseg/ask";
import { MemoryStore, textMessage } from "convoseg/history";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { question, resultWith, save } from "../../knowledge/question-index.js";
import { recordingServer } from "../../support/ask-world.js";

const T0 = Date.UTC(2026, 5, 1);
const MIN = 60_000;
const C = "C0HELP";

let platform: Awaited<ReturnType<typeof recordingServer>>;
beforeAll(async () => {
  platform = await recordingServer();
});
afterAll(() => platform?.close());

/**
 * A channel with three segments: s1 (a question asked by m-a, answered by the model with m-a2;
 * m-b asked later, its conversation holding m-b1), s2 a thread under m-t whose replies ask
 * m-t1's question, and a message m-new not yet extracted.
 */
async function world() {
  const store = new MemoryResultStore();
  const history = new MemoryStore();
  const ids = ["m-a", "m-a2", "m-b", "m-b1", "m-t", "m-t1", "m-t2", "m-new", "m-none"];
  await history.write(
    C,
    ids.map((id, i) => textMessage("user", `text of ${id}`, { id, ts: T0 + i * MIN })),
  );
  const b = question("b", T0 + 2 * MIN, "unanswered", {
    askedId: "m-b",
    question: "<!channel> *why* is `grub` @here?",
  });
  await save(
    store,
    resultWith(C, "s1", [question("a", T0, "answered", { answerIds: ["m-a2"] }), b], {
      messageIds: ["m-a", "m-a2", "m-b", "m-b1"],
    }),
  );
  await save(
    store,
    resultWith(C, "s2", [question("t1", T0 + 5 * MIN, "unanswered", { askedId: "m-t1" })], {
      thread: "m-t",
      messageIds: ["m-t1", "m-t2"],
    }),
  );
  return { store, history };
}

const slack = (
  messageId: string,
  over: Partial<Extract<MarkJob, { platform: "slack" }>> = {},
): MarkJob => ({
  platform: "slack",
  channel: C,
  messageId,
  action: "answered",
  by: "U0MOD",
  responseUrl: `${platform.url}/slack/app/T1/2/x`,
  ...over,
});

async function marked(w: Awaited<ReturnType<typeof world>>) {
  const { items } = await new KnowledgeReader({ store: w.store }).questions(C);
  return Object.fromEntries(
    items.filter((q) => q.correction !== undefined).map((q) => [q.id, q.answerIds]),
  );
}

describe("markAnswer", () => {
  it("finds the question a message answers: by its thread, the model's link, its conversation", async () => {
    const w = await world();
    const deps = {
      store: w.store,
      messages: w.history,
      markers: "anyone" as const,
      slackResponsePrefixes: [`${platform.url}/slack/`],
      now: () => T0 + 60 * MIN,
    };
    const from = platform.requests.length;
    // A reply in m-t's thread: the question asked in that thread.
    expect(await markAnswer(slack("m-t2", { thread: "m-t" }), deps)).toBe("marked");
    // The model already answered a with m-a2.
    expect(await markAnswer(slack("m-a2"), deps)).toBe("marked");
    // m-b1 is in b's conversation (s1), b the nearest question before it.
    expect(await markAnswer(slack("m-b1"), deps)).toBe("marked");
    expect(await marked(w)).toEqual({ t1: ["m-t2"], a: ["m-a2"], b: ["m-b1"] });
    const told = platform.requests.slice(from).map((r) => JSON.parse(r.body));
    expect(told[2]).toEqual({
      response_type: "ephemeral",
      replace_original: false,
      // The question is chat text: shown literally, mentions broken, markup made look-alike.
      text: "Marked as the answer to: “&lt;!channel&gt; ∗why∗ is ˋgrubˋ @\u2060here?”",
    });
    const { items } = await new KnowledgeReader({ store: w.store }).questions(C);
    expect(items.find((q) => q.id === "b")?.correction).toMatchObject({ by: "U0MOD" });
  });

  it("says why not: a question's own message, none found, not stored, not allowed", async () => {
    const w = await world();
    const deps = {
      store: w.store,
      messages: w.history,
      markers: ["U0MOD"],
      slackResponsePrefixes: [`${platform.url}/slack/`],
    };
    const from = platform.requests.length;
    expect(await markAnswer(slack("m-b"), deps)).toBe("asks");
    expect(await markAnswer(slack("m-none"), deps)).toBe("no question");
    expect(await markAnswer(slack("m-404"), deps)).toBe("not stored");
    expect(await markAnswer(slack("m-b1", { by: "U0ELSE" }), deps)).toBe("not allowed");
    const texts = platform.requests.slice(from).map((r) => JSON.parse(r.body).text);
    expect(texts).toEqual([
      expect.stringMatching(/asks a question/),
      expect.stringMatching(/No question found/),
      expect.stringMatching(/not stored yet/),
      expect.stringMatching(/Only the people/),
    ]);
    expect(await marked(w)).toEqual({});
    // A reply address that is not Slack's is refused before anything is posted.
    await expect(
      markAnswer(slack("m-b1", { responseUrl: "https://evil.example/x" }), deps),
    ).rejects.toMatchObject({ code: "ASK_BAD_JOB" });
  });

  it("reopens or hides the question a message asks, else the one it answers", async () => {
    const w = await world();
    const deps = {
      store: w.store,
      messages: w.history,
      markers: "anyone" as const,
      slackResponsePrefixes: [`${platform.url}/slack/`],
    };
    const from = platform.requests.length;
    // a's asking message, reopened: the model's answer goes, the question is open again.
    expect(await markAnswer(slack("m-a", { action: "reopen" }), deps)).toBe("marked");
    // m-b1 answers b (its conversation's): hidden.
    expect(await markAnswer(slack("m-b1", { action: "hidden" }), deps)).toBe("marked");
    const { items } = await new KnowledgeReader({ store: w.store }).questions(C);
    const corrected = items.filter((q) => q.correction !== undefined);
    expect(corrected.map((q) => [q.id, q.status, q.correction?.action])).toEqual([
      ["a", "unanswered", "reopen"],
    ]);
    expect(items.map((q) => q.id)).not.toContain("b");
    const texts = platform.requests.slice(from).map((r) => JSON.parse(r.body).text);
    expect(texts).toEqual([
      "Reopened: “how do I fix a?”",
      expect.stringMatching(/^Hidden: “&lt;!channel&gt;/),
    ]);
  });

  it("on Discord, follows the message it replies to and edits the deferred response", async () => {
    const w = await world();
    const from = platform.requests.length;
    const job: MarkJob = {
      platform: "discord",
      channel: C,
      messageId: "m-none",
      action: "answered",
      by: "1400000000000000001",
      replyTo: "m-a",
      applicationId: "1300000000000000001",
      token: "tok",
    };
    const deps = {
      store: w.store,
      messages: w.history,
      markers: "anyone" as const,
      discordApiBase: `${platform.url}/discord/api`,
    };
    expect(await markAnswer(job, deps)).toBe("marked");
    expect(await marked(w)).toEqual({ a: ["m-none"] });
    const [edit] = platform.requests.slice(from);
    expect([edit.method, edit.path]).toEqual([
      "PATCH",
      "/discord/api/webhooks/1300000000000000001/tok/messages/@original",
    ]);
    expect(JSON.parse(edit.body)).toEqual({
      content: "Marked as the answer to: “how do I fix a?”",
      allowed_mentions: { parse: [] },
      flags: 4,
    });
  });
});
