/**
 * The disentangle command's conversations follow the linker's merges: a message torn between two
 * conversations (`LinkDecision.also`) makes them one, so every message of both is printed in one
 * conversation, named by its first root, as `settledConversations` has them.
 */
import { linkAll, settledConversations } from "convoseg/linker";
import type { ChatMessage } from "convoseg/messages";
import { describe, expect, it } from "vitest";
import { disentangleChannel } from "../../cli/disentangle/conversations.js";
import { linkInput } from "../../cli/shared/conversation-streams.js";
import { Progress } from "../../cli/shared/progress.js";

const PEOPLE = ["ana", "ben", "cleo", "dev", "eli", "fay"];
const TOPICS = [
  ["grub", "boot", "menu"],
  ["wifi", "driver", "drops"],
  ["printer", "queue", "stuck"],
];

/** Three topics interleaved by six people, a line every 20 s, from a fixed generator. */
function interleaved(count: number): ChatMessage[] {
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
      channel: "c",
      id: `m${i}`,
      ts: Date.UTC(2026, 0, 5) + i * 20_000,
      user: PEOPLE[next(6)] as string,
      text: `${address}${words.join(" ")}${next(3) === 0 ? "?" : ""}`,
    };
  });
}

describe("disentangle's conversations", () => {
  it("are the linker's, as its merges settle them", () => {
    const messages = interleaved(400);
    const decisions = linkAll(messages.map((m) => linkInput(m, false)));
    // The chat holds a merge, or this test would hold without them.
    expect(decisions.some((d) => d.merged !== undefined)).toBe(true);
    const linked = disentangleChannel("c", messages, {
      ignoreLinks: false,
      progress: new Progress({ write: () => undefined }),
      status: "linking",
    });
    expect(linked.conversations).toEqual(settledConversations(decisions));
  });
});
