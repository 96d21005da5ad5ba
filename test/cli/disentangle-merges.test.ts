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
import { interleavedChat } from "../support/interleaved-chat.js";

describe("disentangle's conversations", () => {
  it("are the linker's, as its merges settle them", () => {
    const messages: ChatMessage[] = interleavedChat(400, Date.UTC(2026, 0, 5)).map((m) => ({
      ...m,
      channel: "c",
    }));
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
