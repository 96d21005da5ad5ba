/**
 * The disentangle command's conversations follow the linker's merges: a message torn between two
 * conversations (`LinkDecision.also`) makes them one, so every message of both is printed in one
 * conversation, named as `settledConversations` has them; the summary counts
 * those messages and names both of a message's parents.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linkAll, settledConversations } from "convoseg/linker";
import type { ChatMessage } from "convoseg/messages";
import { describe, expect, it } from "vitest";
import { disentangleChannel } from "../../cli/disentangle/conversations.js";
import { formatSummary } from "../../cli/disentangle/summary.js";
import { linkInput } from "../../cli/shared/conversation-streams.js";
import { Progress } from "../../cli/shared/progress.js";
import { runCli } from "../support/cli.js";
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

  it("are counted in the summary, and a message joining two names both parents", async () => {
    const t0 = Date.UTC(2026, 0, 5);
    const chat = interleavedChat(400, t0);
    const decisions = linkAll(chat.map((m) => ({ ...m, author: m.user })));
    const merges = decisions.filter((d) => d.merged !== undefined);
    const dir = mkdtempSync(join(tmpdir(), "convoseg-merges-"));
    const input = join(dir, "chat.jsonl");
    writeFileSync(input, chat.map((m) => JSON.stringify(m)).join("\n"));
    const { code, stdout } = await runCli(["disentangle", input], t0 + 86_400_000);
    expect(code).toBe(0);
    const counted = `${merges.length} message${merges.length === 1 ? "" : "s"}`;
    expect(stdout).toContain(`, ${counted} joining two conversations`);

    // --json names a joining message's second parent, so that the chains of the links printed
    // are the conversations printed, as the corpus's tools build conversations from links.
    const json = await runCli(["disentangle", input, "--json"], t0 + 86_400_000);
    expect(json.code).toBe(0);
    const lines = json.stdout
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { id: string; conversation: string; parent?: string; also?: string },
      );
    expect(lines.filter((l) => l.also !== undefined).map((l) => [l.id, l.also])).toEqual(
      merges.map((d) => [d.id, d.also]),
    );
    const root = new Map(lines.map((l) => [l.id, l.id]));
    const find = (id: string): string => {
      const up = root.get(id) as string;
      return up === id ? id : find(up);
    };
    for (const l of lines)
      for (const to of [l.parent, l.also]) if (to !== undefined) root.set(find(l.id), find(to));
    const chains = new Map<string, Set<string>>();
    const printed = new Map<string, Set<string>>();
    for (const l of lines) {
      chains.set(find(l.id), (chains.get(find(l.id)) ?? new Set()).add(l.id));
      printed.set(l.conversation, (printed.get(l.conversation) ?? new Set()).add(l.id));
    }
    const partition = (groups: Map<string, Set<string>>) =>
      [...groups.values()].map((g) => [...g].sort().join(" ")).sort();
    expect(partition(chains)).toEqual(partition(printed));
  });

  it("name both parents of a message that joined two", () => {
    const at = Date.UTC(2026, 0, 5);
    const messages: ChatMessage[] = ["ana", "ben", "cleo", "dev"].map((user, i) => ({
      channel: "c",
      id: `m${i}`,
      ts: at + i * 60_000,
      user,
      text: `line ${i}`,
    }));
    const summary = formatSummary([
      {
        channel: "c",
        messages,
        decisions: [
          { id: "m0", conversation: "m0", source: "inferred" },
          { id: "m1", conversation: "m1", source: "inferred" },
          { id: "m2", parent: "m0", conversation: "m0", source: "inferred" },
          {
            id: "m3",
            parent: "m2",
            also: "m1",
            merged: "m1",
            conversation: "m0",
            source: "inferred",
          },
        ],
        conversations: ["m0", "m0", "m0", "m0"],
        unknownParents: 0,
      },
    ]);
    expect(summary).toContain("1 message joining two conversations");
    expect(summary).toMatch(/dev \(reply to cleo and to ben\): line 3/);
  });
});
