/**
 * Choices made for the linker (`LinkChoice`: a parent recorded before, an advisor's answer) and
 * the options it lists (`alternatives`): a choice it may take replaces its model's and is marked,
 * one it may not take is ignored, and listing options changes no decision. A choice the model
 * picks itself merges as its pick would, so parents recorded by a run that died link the same
 * conversations again.
 */
import { type LinkInput, linkAll, ReplyLinker, settledConversations } from "convoseg/linker";
import { describe, expect, it } from "vitest";
import { interleavedChat } from "../../support/interleaved-chat.js";

const T = Date.UTC(2025, 0, 6);
const chat: LinkInput[] = [
  { id: "a", ts: T, author: "ann", text: "my wifi driver drops every hour" },
  { id: "b", ts: T + 10_000, author: "bob", text: "grub shows no boot menu after the update" },
  { id: "c", ts: T + 20_000, author: "cid", text: "ann: which chipset is it?" },
  { id: "j", ts: T + 25_000, author: "dee", text: "dee joined", kind: "system" },
  { id: "d", ts: T + 30_000, author: "dee", text: "bob: hold shift while it boots" },
  { id: "e", ts: T + 40_000, author: "eve", text: "thanks that worked" },
];

function linkWith(choices: Record<string, string | null>, alternatives = 0) {
  const linker = new ReplyLinker({ alternatives });
  return chat.map((m) =>
    linker.link(m, m.id in choices ? { parent: choices[m.id] as string | null } : undefined),
  );
}

describe("choices for the reply linker", () => {
  it("lists the best options without changing a decision", () => {
    const plain = linkAll(chat);
    const listed = linkWith({}, 3);
    expect(listed.map(({ options: _, ...d }) => d)).toEqual(plain);
    const e = listed.at(-1);
    expect(e?.options).toHaveLength(3);
    expect(e?.options?.[0] ?? null).toBe(e?.parent ?? null);
  });

  it("takes a choice it may take, marked, and later links follow it", () => {
    const chosen = linkWith({ e: "a" });
    const e = chosen.at(-1);
    expect(e).toMatchObject({ parent: "a", conversation: "a", chosen: true, source: "inferred" });
    const started = linkWith({ d: null });
    expect(started.find((x) => x.id === "d")).toMatchObject({ conversation: "d", chosen: true });
    expect(started.find((x) => x.id === "d")?.parent).toBeUndefined();
  });

  it("ignores a choice of a system line, a later message or one never seen", () => {
    const plain = linkAll(chat);
    for (const parent of ["j", "e", "zz"]) {
      const decisions = linkWith({ d: parent });
      expect(decisions.find((x) => x.id === "d")).toEqual(plain.find((x) => x.id === "d"));
    }
  });

  it("merges beside a chosen parent that is its model's own pick, as the run that chose it did", () => {
    const lines: LinkInput[] = interleavedChat(400, T).map((m) => ({
      id: m.id,
      ts: m.ts,
      author: m.user,
      text: m.text,
    }));
    const plain = linkAll(lines);
    expect(plain.some((d) => d.merged !== undefined)).toBe(true);
    const again = new ReplyLinker();
    const replayed = lines.map((m, i) => again.link(m, { parent: plain[i]?.parent ?? null }));
    expect(replayed.map(({ chosen: _, ...d }) => d)).toEqual(plain);
    expect(settledConversations(replayed)).toEqual(settledConversations(plain));
    // A parent other than the model's pick is decided: nothing merges beside it.
    const merging = plain.findIndex((d) => d.merged !== undefined);
    const other = plain[merging]?.also as string;
    const overruled = new ReplyLinker();
    const decided = lines.map((m, i) =>
      overruled.link(m, i === merging ? { parent: other } : undefined),
    );
    expect(decided[merging]).toMatchObject({ parent: other, chosen: true });
    expect(decided[merging]?.merged).toBeUndefined();
  });
});
