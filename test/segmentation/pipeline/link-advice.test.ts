/**
 * The tick with a link advisor (`LinkAdvisor`), on the in-memory stores: an advisor's answer is
 * taken before a link is recorded and never changes it after, whatever the crashes and however
 * the advisor answers; only options offered are taken; and an advisor that fails, hangs or is
 * refused by its spend bound leaves exactly the segments and links of the linker alone.
 */

import { MemoryStore } from "convoseg/history";
import { compareRefs } from "convoseg/identity";
import type { LinkAdvisor, LinkAnswer, LinkQuestion } from "convoseg/linker";
import { runTick, type SegmentDelivery, type TickSettings } from "convoseg/pipeline";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryRogueMarks } from "../../support/rogue-marks.js";
import {
  type Chat,
  chatArbitrary,
  crashingDeps,
  crashSettings,
  distinctSegments,
  type ReplayStores,
  replay,
  settingsArbitrary,
  survive,
  T0,
} from "./crash-replay.js";

const memoryStores = (clock: { now: number }): ReplayStores => {
  const channels = new MemoryChannelStore(() => clock.now, 4);
  return {
    messages: new MemoryStore({ positions: channels }),
    channels,
    rogue: memoryRogueMarks(channels),
  };
};

/** Every message's recorded inferred parent, by id. */
async function storedParents(stores: ReplayStores, chat: Chat[]): Promise<Map<string, string>> {
  const parents = new Map<string, string>();
  for (const channel of new Set(chat.map((m) => m.channel))) {
    const ids = chat.filter((m) => m.channel === channel).map((m) => m.id);
    for (const m of await stores.messages.getMessages(channel, ids)) {
      if (m.id !== undefined && m.inferredReplyTo !== undefined)
        parents.set(m.id, m.inferredReplyTo);
    }
  }
  return parents;
}

/**
 * Each own-stream message's conversation as its links make it: the conversation of its parent
 * (the platform's `replyTo`, else the recorded inferred one) when that is an earlier message of
 * the channel's own stream, the parent's id when it is not, else its own id.
 */
function conversationsOf(chat: Chat[], parents: ReadonlyMap<string, string>): Map<string, string> {
  const conversation = new Map<string, string>();
  for (const m of [...chat].sort(compareRefs)) {
    if (m.thread !== undefined) continue;
    const parent = m.replyTo ?? parents.get(m.id);
    conversation.set(m.id, parent === undefined ? m.id : (conversation.get(parent) ?? parent));
  }
  return conversation;
}

/**
 * An advisor that answers from `picks`, one a question, in turn: an option offered, "starts
 * one", an id never offered, or nothing; and every so often fails outright.
 */
function scriptedAdvisor(picks: readonly number[], calls: { n: number }): LinkAdvisor {
  return {
    margin: 1e9,
    candidates: 3,
    batch: 50,
    timeoutMs: 5_000,
    async ask(_channel: string, questions: readonly LinkQuestion[]): Promise<LinkAnswer[]> {
      const call = calls.n++;
      if ((picks[call % picks.length] ?? 0) % 7 === 6) throw new Error("scripted failure");
      return questions.flatMap((q, i) => {
        const pick = picks[(call + i) % picks.length] ?? 0;
        const options = [null, ...q.candidates.map((c) => c.id), "m999", undefined];
        const parent = options[pick % options.length];
        return parent === undefined ? [] : [{ id: q.message.id, parent }];
      });
    },
  };
}

describe("the tick with a link advisor, on the in-memory stores", () => {
  it("records each link once, never changes it, and delivers each message once, in its links' conversation", async () => {
    let advised = 0;
    await fc.assert(
      fc.asyncProperty(
        chatArbitrary(30),
        settingsArbitrary,
        fc.array(fc.nat(12), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(100), { minLength: 1, maxLength: 20 }),
        async (chat, partial, crashes, picks) => {
          // minItems 1: every message is delivered, none dropped.
          const s = crashSettings({ ...partial, minItems: 1 }, "linked");
          const clock = { now: T0, wall: T0 };
          const stores = memoryStores(clock);
          const sent: SegmentDelivery[] = [];
          const calls = { n: 0 };
          const seen = new Map<string, string>();
          let merged = 0;
          // A tick that dies right after its state is recorded (a lost response) never counts
          // the merges that state holds: then the count says nothing of merges.
          let uncounted = false;
          await replay(chat, s, clock, stores, async (tick, crashesAllowed) => {
            const crashAt = crashesAllowed ? (crashes[tick % crashes.length] ?? 0) : 0;
            const control = { calls: 0, crashAt, dies: true };
            let recordedAs = 0;
            const channels = new Proxy(stores.channels, {
              get(store, property) {
                const value = Reflect.get(store, property);
                if (typeof value !== "function") return value;
                if (property !== "record") return value.bind(store);
                return async (...args: unknown[]) => {
                  const recorded = await value.apply(store, args);
                  // The crashing proxy numbers this call next.
                  if (recorded !== "conflict") recordedAs = control.calls + 1;
                  return recorded;
                };
              },
            });
            const deps = crashingDeps(
              { ...stores, channels },
              { sent, settings: s, clock },
              control,
            );
            deps.advisor = scriptedAdvisor(picks, calls);
            deps.metrics = {
              add: (name, value) => {
                if (name === "LinksAdvised") advised += value;
                if (name === "ConversationsMerged") merged += value;
              },
            };
            await runTick(deps).catch(survive);
            if (recordedAs !== 0 && recordedAs === crashAt) uncounted = true;
            // A link once recorded stays as it was, whatever later ticks ask.
            for (const [id, parent] of await storedParents(stores, chat)) {
              expect(seen.get(id) ?? parent, id).toBe(parent);
              seen.set(id, parent);
            }
          });
          const parents = await storedParents(stores, chat);
          const conversation = conversationsOf(chat, parents);
          const delivered = new Map<string, string>();
          for (const segment of distinctSegments(sent)) {
            for (const id of segment.messages.map((m) => m.id)) {
              expect(delivered.has(id), `${id} delivered twice`).toBe(false);
              delivered.set(id, segment.segmentId);
              // A merge (of links no one chose) joins conversations the recorded links do not.
              if (segment.thread === undefined && merged === 0 && !uncounted)
                expect(conversation.get(id), id).toBe(segment.conversation);
            }
          }
          expect([...delivered.keys()].sort()).toEqual(chat.map((m) => m.id).sort());
        },
      ),
      { numRuns: 60 },
    );
    // The advisor's answers were taken, not only asked for.
    expect(advised).toBeGreaterThan(0);
  }, 120_000);

  it("keeps the linker's own links when the advisor fails, hangs, is refused or answers off the list", async () => {
    // Two conversations interleaved in one channel, with a minute or two between lines.
    const people = ["ana", "ben", "cleo", "dev"];
    const topics = ["grub boot menu", "wifi driver drops"];
    const chat: Chat[] = Array.from({ length: 30 }, (_, i) => ({
      id: `m${String(i).padStart(3, "0")}`,
      ts: T0 + (i * 3 + (i % 5)) * 20_000,
      channel: "a",
      user: people[i % 4],
      text: `${topics[(i >> 1) % 2]} ${i}`,
    }));
    const s: TickSettings = crashSettings({ maxSize: 4, minItems: 1 }, "linked");
    const run = async (advisor?: LinkAdvisor) => {
      const clock = { now: T0, wall: T0 };
      const stores = memoryStores(clock);
      const sent: SegmentDelivery[] = [];
      const asked: number[] = [];
      await replay(chat, s, clock, stores, async () => {
        const deps = crashingDeps(
          stores,
          { sent, settings: s, clock },
          {
            calls: 0,
            crashAt: 0,
            dies: false,
          },
        );
        if (advisor !== undefined) {
          deps.advisor = advisor;
          deps.metrics = {
            add: (name, value) => void (name === "LinksAsked" && asked.push(value)),
          };
        }
        await runTick(deps);
      });
      return {
        sent: sent.map((d) => d.segment.messages.map((m) => m.id)),
        parents: await storedParents(stores, chat),
        asked,
      };
    };
    const alone = await run();
    const base = { margin: 1e9, candidates: 3, batch: 50 };
    const failing: LinkAdvisor[] = [
      { ...base, timeoutMs: 1000, ask: async () => Promise.reject(new Error("provider down")) },
      // Never answers, and ignores the signal: the tick waits its time, then goes on.
      { ...base, timeoutMs: 20, ask: () => new Promise<never>(() => {}) },
      {
        ...base,
        timeoutMs: 1000,
        ask: async () => {
          throw Object.assign(new Error("daily token budget reached"), {
            name: "BudgetPausedError",
          });
        },
      },
      {
        ...base,
        timeoutMs: 1000,
        ask: async (_c, questions) =>
          questions.map((q) => ({ id: q.message.id, parent: "not-offered" })),
      },
    ];
    for (const advisor of failing) {
      const advised = await run(advisor);
      expect(advised.asked.some((n) => n > 0)).toBe(true);
      expect(advised.sent).toEqual(alone.sent);
      expect(advised.parents).toEqual(alone.parents);
    }
  }, 60_000);
});
