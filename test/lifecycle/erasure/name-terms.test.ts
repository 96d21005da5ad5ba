/**
 * The offline extractor's term statistics after a person with a name of two words is erased:
 * no term or term log keeps their name in any form the extractor writes it (`@alice zorbington`
 * for an author, `alic zorbington` stemmed from others' text), whatever spaces their stored
 * display name has around it and whatever its lower case is, and no word only they wrote.
 */

import { eraseUser, MemoryAuditStore } from "convoseg/erasure";
import { KeyphraseExtractor, namesTerm } from "convoseg/extraction/offline";
import { MemoryStore, textMessage } from "convoseg/history";
import { mentions } from "convoseg/history/changes";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { ANALYSIS } from "../../knowledge/fixtures.js";
import { NOW, segmentAt } from "../../knowledge/redaction.js";
import { erasureDependencies, HOUR } from "./world.js";

const USER_ID = "U0ZORB";
/** Words only the person writes. */
const THEIR_WORDS = ["quuxolator", "frobnitz"];

/** Two segments of one channel: the person writes in the first; others name them in both. */
function chat(name: string): [string, string][][] {
  return [
    [
      ["bob", "the bootloader broke after the kernel update"],
      [name, "quuxolator frobnitz bootloader fix: reinstall the quuxolator"],
      ["carol", `thanks @${name.trim()}, the bootloader is back`],
      [name, "frobnitz works, the quuxolator bootloader is back"],
    ],
    [
      ["bob", `${name.trim()} knows the bootloader config well`],
      ["carol", `ask ${name.trim()} about the bootloader config`],
      ["bob", "the bootloader config lives in etc default grub"],
    ],
  ];
}

async function erased(name: string): Promise<string[]> {
  const history = new MemoryStore();
  const results = new MemoryResultStore();
  const extractor = new SegmentExtractor({
    store: results,
    extractor: new KeyphraseExtractor(),
    model: "m",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => NOW,
    owner: () => "owner",
  });
  for (const [s, lines] of chat(name).entries()) {
    const { segment, messages } = segmentAt(
      "#help",
      `s${s}`,
      lines.map(([, text]) => text),
      NOW + s * 3 * HOUR,
    );
    const authored = messages.map((m, i) => ({ ...m, author: lines[i][0] }));
    await history.write(
      "#help",
      authored.map((m) =>
        textMessage("user", m.text, {
          id: m.id,
          ts: m.ts,
          author: m.author,
          ...(m.author === name ? { userId: USER_ID } : {}),
        }),
      ),
    );
    await extractor.extract(segment, authored);
  }
  const terms = () =>
    results.items().flatMap((item) => {
      const {
        item: key,
        term,
        terms: logged,
      } = item as { item: string; term?: string; terms?: string[] };
      return key.startsWith("term") ? [term, ...(logged ?? [])].filter((t) => t !== undefined) : [];
    });
  // The statistics held the name in both forms before.
  expect(terms()).toEqual(expect.arrayContaining([`@${name.trim().toLowerCase()}`]));
  const outcome = await eraseUser(erasureDependencies(history, results, new MemoryAuditStore()), {
    userId: USER_ID,
    requestedBy: "dpo",
  });
  expect(outcome.done).toBe(true);
  return terms() as string[];
}

/** The terms holding the name's two words in a row, in any form, with or without `@`. */
function naming(terms: readonly string[], first: string): string[] {
  const firsts = new Set([first, first.slice(0, -1)]);
  return terms.filter((term) => {
    const words = term.replace(/^@/u, "").split(/\s+/u);
    return words.some((word, i) => firsts.has(word) && words[i + 1] === "zorbington");
  });
}

describe("erasing a person with a name of two words from the term statistics", () => {
  it.each([
    ["Alice Zorbington", "alice"],
    // As some exports store it, with a space after; and a name whose lower case is longer.
    ["Alice Zorbington ", "alice"],
    ["İlke Zorbington", "i̇lke"],
  ])("leaves no term naming %j, nor a word only they wrote", async (name, first) => {
    const left = await erased(name);
    expect(naming(left, first)).toEqual([]);
    for (const word of THEIR_WORDS) {
      expect(left.filter((term) => term.includes(word.slice(0, 6)))).toEqual([]);
    }
    // The others' words stay.
    expect(left).toContain("bootloader");
  });
});

describe("namesTerm", () => {
  it("finds a name's words in a row, as an author's name term or as stemmed keys", () => {
    const named = namesTerm(["Alice Zorbington", " "]);
    for (const term of [
      "@alice zorbington",
      "@alice  zorbington",
      "alic zorbington",
      "ask alic zorbington",
    ]) {
      expect(named(term), term).toBe(true);
    }
    for (const term of ["zorbington", "@alice", "alice", "zorbington alic", "alicezorbington"]) {
      expect(named(term), term).toBe(false);
    }
  });

  it("mentions finds a stored name with spaces around it, and lower-cases as the extractor does", () => {
    expect(mentions("ask Alice  Zorbington about it", " Alice Zorbington ")).toBe(true);
    expect(mentions("@i̇lke zorbington", "İlke Zorbington")).toBe(true);
    expect(mentions("alice zorbingtons", "Alice Zorbington")).toBe(false);
    expect(mentions("anything", "  ")).toBe(false);
  });
});
