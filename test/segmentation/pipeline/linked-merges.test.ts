/**
 * The tick where the reply linker merges two conversations (`LinkDecision.merged`): it counts the
 * merges (`ConversationsMerged`), delivers every message once, and puts each segment's messages in
 * one conversation as the merges leave it, whatever the ticks' times; a tick that loses the race
 * to record its state counts none.
 */
import { MemoryStore } from "convoseg/history";
import { compareRefs } from "convoseg/identity";
import { linkAll, settledConversations } from "convoseg/linker";
import { runTick, type SegmentDelivery } from "convoseg/pipeline";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { interleavedChat } from "../../support/interleaved-chat.js";
import { memoryRogueMarks } from "../../support/rogue-marks.js";
import {
  type Chat,
  crashingDeps,
  crashSettings,
  distinctSegments,
  replay,
  T0,
} from "./crash-replay.js";

function mergesOf(chat: readonly Chat[]): { merges: number; conversationOf: Map<string, string> } {
  const decisions = linkAll(
    [...chat]
      .sort(compareRefs)
      .map((m) => ({ id: m.id, ts: m.ts, author: m.user ?? "", text: m.text })),
  );
  const settled = settledConversations(decisions);
  return {
    merges: decisions.filter((d) => d.merged !== undefined).length,
    conversationOf: new Map(decisions.map((d, i) => [d.id, settled[i] as string])),
  };
}

/** A pipeline clock at the chat's start and memory stores on it. */
function memoryWorld() {
  const clock = { now: T0, wall: T0 };
  const channels = new MemoryChannelStore(() => clock.now, 4);
  const stores = {
    messages: new MemoryStore({ positions: channels }),
    channels,
    rogue: memoryRogueMarks(channels),
  };
  return { clock, stores };
}

describe("the tick, where the linker merges conversations", () => {
  it("counts no merge of a tick that loses the race to record its state", async () => {
    const chat: Chat[] = interleavedChat(400, T0).map((m) => ({ ...m, channel: "a" }));
    const { merges } = mergesOf(chat);
    expect(merges).toBeGreaterThan(0);
    const s = crashSettings({ maxSize: 100, minItems: 1 }, "linked");
    const { clock, stores } = memoryWorld();
    let counted = 0;
    let conflicts = 0;
    const lost = new Set<string>();
    await replay(chat, s, clock, stores, async () => {
      const deps = crashingDeps(stores, { sent: [], settings: s, clock }, { calls: 0, crashAt: 0 });
      // Each state a tick would record is lost once to another tick's, recorded first: the
      // next tick links the same arrivals again, and records them when nothing new came.
      const real = deps.channels;
      deps.channels = new Proxy(real, {
        get(target, name) {
          if (name === "record")
            return (...args: Parameters<typeof real.record>) => {
              const [snapshot, next] = args;
              const key = `${snapshot.record.version} ${Buffer.from(next.encoded).toString("base64")}`;
              if (lost.has(key)) return real.record(...args);
              lost.add(key);
              conflicts++;
              return Promise.resolve("conflict" as const);
            };
          const value = Reflect.get(target, name, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      deps.metrics = {
        add: (name, value) => {
          if (name === "ConversationsMerged") counted += value;
        },
      };
      await runTick(deps);
    });
    expect(conflicts).toBeGreaterThan(0);
    expect(counted).toBe(merges);
  });

  it("counts each merge once, delivers every message once, each segment one conversation as merged", async () => {
    const chat: Chat[] = interleavedChat(400, T0).map((m) => ({ ...m, channel: "a" }));
    const { merges, conversationOf } = mergesOf(chat);
    expect(merges).toBeGreaterThan(0);
    for (const maxSize of [2, 100]) {
      const s = crashSettings({ maxSize, minItems: 1 }, "linked");
      const { clock, stores } = memoryWorld();
      const sent: SegmentDelivery[] = [];
      let counted = 0;
      await replay(chat, s, clock, stores, async () => {
        const deps = crashingDeps(stores, { sent, settings: s, clock }, { calls: 0, crashAt: 0 });
        deps.metrics = {
          add: (name, value) => {
            if (name === "ConversationsMerged") counted += value;
          },
        };
        await runTick(deps);
      });
      expect(counted).toBe(merges);
      const delivered: string[] = [];
      for (const segment of distinctSegments(sent)) {
        const ids = segment.messages.map((m) => m.id);
        delivered.push(...ids);
        expect(new Set(ids.map((id) => conversationOf.get(id))).size, segment.segmentId).toBe(1);
      }
      expect(delivered.sort()).toEqual(chat.map((m) => m.id).sort());
    }
  });
});
