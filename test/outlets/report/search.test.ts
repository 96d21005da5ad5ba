import { buildReport } from "convoseg/report";
import { MAX_SEGMENT_TEXT } from "convoseg/search";
import { describe, expect, it } from "vitest";
import {
  MAX_SEGMENT_TEXT as PAGE_MAX_SEGMENT_TEXT,
  ReportSearch,
} from "../../../lib/outlets/report/page/search-index.js";
import { ALL_MESSAGES, CANDIDATES, INJECTION, MESSAGES, NOW, OPS, SEGMENTS } from "./fixtures.js";

/** The known report, seg-h2 asking a question, and its search with every document indexed. */
function known(): {
  search: ReportSearch;
  channels: string[];
  report: ReturnType<typeof buildReport>;
} {
  const asked = {
    id: "q1",
    question: "which wifi chipset is it?",
    status: "unanswered" as const,
    askedId: "h05",
    askedTs: MESSAGES.find((m) => m.id === "h05")?.ts ?? 0,
    answerIds: [],
  };
  const report = buildReport({
    segments: SEGMENTS,
    candidates: CANDIDATES.map((c) =>
      c.segmentId === "seg-h2" ? { ...c, questions: [asked] } : c,
    ),
    messages: ALL_MESSAGES,
    settle: 3_600_000,
    now: NOW,
    generatedAt: NOW,
  });
  const search = new ReportSearch(report.data, report.texts);
  search.indexSome();
  return { search, channels: report.data.channels.map((c) => c.name), report };
}

/** The words a hit's snippet marks. */
const marked = ({ snippet }: { snippet: { text: string; marks: [number, number][] } }) =>
  snippet.marks.map(([start, end]) => snippet.text.slice(start, end));

describe("the report's search", () => {
  it("holds a document per message with words, per segment, per topic and per question", () => {
    const { search } = known();
    // 15 messages, 5 segments, the channels' 5 topics (wifi driver merged over two), 1 question.
    expect(search.size).toBe(15 + 5 + 5 + 1);
    expect(search.ready).toBe(true);
    // A conversation's words are cut where the search index's are (the page cannot import it).
    expect(PAGE_MAX_SEGMENT_TEXT).toBe(MAX_SEGMENT_TEXT);
  });

  it("finds every word, what was learned first, each hit with its channel, segment and marks", () => {
    const { search, channels } = known();
    const { hits, total, partial } = search.search("wifi driver", 50);
    expect(partial).toBe(false);
    expect(total).toBe(hits.length);
    // The topic leads; its channel's index and its first supporting segment (seg-h2, #2).
    expect(hits[0]).toMatchObject({ kind: "topic", title: "wifi driver", segment: 1 });
    expect(channels[hits[0].channel]).toBe("help");
    // Its words, then its best reason's.
    expect(marked(hits[0])).toEqual(["wifi", "driver", "driver"]);
    const kinds = new Set(hits.map((h) => h.kind));
    expect([...kinds].sort()).toEqual(["conversation", "message", "topic"]);
    const message = hits.find((h) => h.snippet.text === "the wifi driver drops every few minutes");
    expect(message).toMatchObject({ kind: "message", segment: 1, detail: "bo" });
    expect(marked(message as (typeof hits)[number])).toEqual(["wifi", "driver"]);
    const conversation = hits.find((h) => h.kind === "conversation" && h.segment === 1);
    expect(conversation?.title).toBe("wifi driver; firmware; which wifi chipset is it?");
  });

  it("takes the last word as typed so far, a longer word one letter off, and no common words", () => {
    const { search } = known();
    const bootloader = search.search("grub bootl").hits;
    expect(bootloader.length).toBeGreaterThan(4);
    expect(bootloader.every((h) => marked(h).includes("bootloader"))).toBe(true);
    expect(search.search("firmwre").hits.map((h) => h.title)).toContain("firmware");
    expect(search.search("do the it").total).toBe(0);
    expect(search.search("   ").total).toBe(0);
  });

  it("falls back to some of the words when none has all, and says so", () => {
    const { search } = known();
    const result = search.search("printer chipset");
    expect(result.partial).toBe(true);
    const printer = result.hits.find((h) => h.kind === "message");
    // h11 is in no segment: its hit opens only its channel.
    expect(printer).toMatchObject({ segment: -1, detail: "ana" });
    expect(result.hits.find((h) => h.kind === "question")).toMatchObject({
      title: "which wifi chipset is it?",
      detail: "unanswered",
      segment: 1,
    });
  });

  it("finds chat's markup as words, in a snippet that is the message's own text", () => {
    const { search, channels } = known();
    const hits = search.search("deploy pwned").hits;
    expect(hits.map((h) => [h.kind, channels[h.channel]])).toEqual([
      ["conversation", OPS],
      ["message", OPS],
    ]);
    expect(hits[1].snippet.text).toBe(`deploy notes ${INJECTION}`);
  });

  it("caps the hits and indexes a slice at a time to the same answers", () => {
    const { search, report } = known();
    const all = search.search("the wifi", 50);
    expect(search.search("the wifi", 3).hits).toEqual(all.hits.slice(0, 3));
    const sliced = new ReportSearch(report.data, report.texts);
    sliced.indexSome(4);
    expect(sliced.ready).toBe(false);
    expect(sliced.indexed).toBe(4);
    while (!sliced.ready) sliced.indexSome(4);
    expect(sliced.search("the wifi", 50)).toEqual(all);
  });
});
