/**
 * The tick where the reply linker merges two conversations (`LinkDecision.merged`): it counts the
 * merges (`ConversationsMerged`), delivers every message once, and puts each segment's messages in
 * one conversation as the merges leave it, whatever the ticks' times.
 */
import { MemoryStore } from "convoseg/history";
import { compareRefs } from "convoseg/identity";
import { linkAll, settledConversations } from "convoseg/linker";
import { runTick, type SegmentDelivery } from "convoseg/pipeline";
import { MemoryChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { memoryRogueMarks } from "../../support/rogue-marks.js";
import {
  type Chat,
  crashingDeps,
  crashSettings,
  distinctSegments,
  replay,
  T0,
} from "./crash-replay.js";

const PEOPLE = ["ana", "ben", "cleo", "dev", "eli", "fay"];
const TOPICS = [
  ["grub", "boot", "menu"],
  ["wifi", "driver", "drops"],
  ["printer", "queue", "stuck"],
];

/** Three topics interleaved by six people on one channel, a line every 20 s, fixed. */
function interleaved(count: number): Chat[] {
  let seed = 7;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed % n;
  };
  return Array.from({ length: count }, (_, i) => {
    const topic = TOPICS[next(3)] as string[];
    const words = Array.from({ length: 1 + next(4) }, () => topic[next(3)]);
    const address = next(3) === 0 ? `${PEOPLE[next(6)]}: ` : "";
    return {
      id: `m${String(i).padStart(3, "0")}`,
      ts: T0 + i * 20_000,
      channel: "a",
      user: PEOPLE[next(6)] as string,
      text: `${address}${words.join(" ")}${next(3) === 0 ? "?" : ""}`,
    };
  });
}

describe("the tick, where the linker merges conversations", () => {
  it("counts each merge once, delivers every message once, each segment one conversation as merged", async () => {
    const chat = interleaved(400);
    const decisions = linkAll(
      [...chat]
        .sort(compareRefs)
        .map((m) => ({ id: m.id, ts: m.ts, author: m.user ?? "", text: m.text })),
    );
    const merges = decisions.filter((d) => d.merged !== undefined).length;
    expect(merges).toBeGreaterThan(0);
    const settled = settledConversations(decisions);
    const conversationOf = new Map(decisions.map((d, i) => [d.id, settled[i] as string]));
    for (const maxSize of [2, 100]) {
      const s = crashSettings({ maxSize, minItems: 1 }, "linked");
      const clock = { now: T0, wall: T0 };
      const channels = new MemoryChannelStore(() => clock.now, 4);
      const stores = {
        messages: new MemoryStore({ positions: channels }),
        channels,
        rogue: memoryRogueMarks(channels),
      };
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
