/**
 * The channel's term statistics on a results store, exactly once: what every `ResultStore` must
 * do (the memory double in the unit tier, DynamoDB in the emulator tier), and through the
 * `SegmentExtractor` with the offline extractor under retries and re-extraction.
 */

import { KEYPHRASE_VOCABULARY, KeyphraseExtractor } from "convoseg/extraction/offline";
import type { ResultStore } from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { type CrashControl, crashing, InjectedCrash } from "../support/crash.js";
import { segmentOf } from "./fixtures.js";

const V = "test-1";

/** The counts of `terms` in `channel`, as seen from a segment that counted nothing. */
async function counts(store: ResultStore, channel: string, terms: string[]) {
  const { segments, frequencies } = await store.termCounts(channel, V, terms, "nobody");
  return { segments, frequencies: Object.fromEntries(frequencies) };
}

const many = (n: number, prefix = "t") =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);

export function describeTermStatistics(name: string, makeStore: () => Promise<ResultStore>): void {
  let channels = 0;
  const channel = () => `${name}-terms-${++channels}-${Date.now()}`;

  describe(`${name}: term statistics`, () => {
    it("counts a segment's terms once, however often it is counted", async () => {
      const store = await makeStore();
      const c = channel();
      await store.countTerms(c, "s1", { vocabulary: V, terms: ["grub", "kernel", "grub"] });
      await store.countTerms(c, "s1", { vocabulary: V, terms: ["kernel", "grub"] });
      await store.countTerms(c, "s2", { vocabulary: V, terms: ["grub"] });
      expect(await counts(store, c, ["grub", "kernel", "wifi"])).toEqual({
        segments: 2,
        frequencies: { grub: 2, kernel: 1 },
      });
    });

    it("leaves out what the asking segment itself counted", async () => {
      const store = await makeStore();
      const c = channel();
      await store.countTerms(c, "s1", { vocabulary: V, terms: ["grub", "kernel"] });
      await store.countTerms(c, "s2", { vocabulary: V, terms: ["grub"] });
      const own = await store.termCounts(c, V, ["grub", "kernel"], "s1");
      expect({ segments: own.segments, frequencies: Object.fromEntries(own.frequencies) }).toEqual({
        segments: 1,
        frequencies: { grub: 1 },
      });
    });

    it("counts only the new terms when a segment counts again with more (chunks of many)", async () => {
      const store = await makeStore();
      const c = channel();
      const first = many(150);
      await store.countTerms(c, "s1", { vocabulary: V, terms: first });
      await store.countTerms(c, "s1", { vocabulary: V, terms: [...first, ...many(60, "u")] });
      const all = await counts(store, c, [...first, ...many(60, "u")]);
      expect(all.segments).toBe(1);
      expect(Object.values(all.frequencies)).toEqual(Array(210).fill(1));
      expect(Object.keys(all.frequencies)).toHaveLength(210);
    });

    it("keeps vocabularies and channels apart", async () => {
      const store = await makeStore();
      const c = channel();
      await store.countTerms(c, "s1", { vocabulary: V, terms: ["grub"] });
      await store.countTerms(c, "s1", { vocabulary: "other-1", terms: ["grub"] });
      await store.countTerms(`${c}-b`, "s1", { vocabulary: V, terms: ["grub"] });
      expect(await counts(store, c, ["grub"])).toEqual({ segments: 1, frequencies: { grub: 1 } });
    });

    it("counts a segment without terms as a segment", async () => {
      const store = await makeStore();
      const c = channel();
      await store.countTerms(c, "s1", { vocabulary: V, terms: [] });
      expect(await counts(store, c, ["grub"])).toEqual({ segments: 1, frequencies: {} });
    });

    it("refuses a vocabulary that cannot stand in a key", async () => {
      const store = await makeStore();
      await expect(
        store.countTerms(channel(), "s1", { vocabulary: "Bad Name#", terms: ["x"] }),
      ).rejects.toThrow(/vocabulary must be/);
    });
  });

  describe(`${name}: the offline extractor's statistics through SegmentExtractor`, () => {
    const texts = (topic: string) => [
      `my ${topic} breaks at boot`,
      `reinstall the ${topic} then`,
      `the ${topic} works now, thanks`,
      "anyone around?",
    ];

    /** The vocabulary's counts in `c` for these terms. */
    const offline = async (store: ResultStore, c: string, terms: string[]) => {
      const { segments, frequencies } = await store.termCounts(
        c,
        KEYPHRASE_VOCABULARY,
        terms,
        "nobody",
      );
      return { segments, frequencies: Object.fromEntries(frequencies) };
    };

    function extractorOn(store: ResultStore, control?: CrashControl) {
      return new SegmentExtractor({
        store: control ? crashing(store, control) : store,
        extractor: new KeyphraseExtractor(),
        model: "keyphrases",
        promptVersion: "test",
        leaseMs: 60_000,
        now: () => Date.UTC(2026, 0, 1),
      });
    }

    it("counts each extracted segment once; redelivery and re-extraction count nothing", async () => {
      const store = await makeStore();
      const c = channel();
      const a = segmentOf("a", texts("bootloader"), c);
      const b = segmentOf("b", texts("bootloader"), c);
      const extractor = extractorOn(store);
      await extractor.extract(a.segment, a.messages);
      await extractor.extract(b.segment, b.messages);
      await extractor.extract(a.segment, a.messages);
      const again = await extractor.extract(a.segment, a.messages, { force: true });
      expect(again.status).toBe("replaced");
      expect(await offline(store, c, ["bootloader", "@alice"])).toEqual({
        segments: 2,
        frequencies: { bootloader: 2, "@alice": 2 },
      });
    });

    it("counts once when the process dies after any store call and the segment is retried", async () => {
      // Calls of one extraction: getResult, acquireLease, getResult, getWindow, termCounts,
      // putWindow, countTerms, saveResult.
      for (let crashAt = 1; crashAt <= 8; crashAt++) {
        const store = await makeStore();
        const c = channel();
        const { segment, messages } = segmentOf("s", texts("bootloader"), c);
        const control: CrashControl = { calls: 0, crashAt, dies: true };
        await expect(extractorOn(store, control).extract(segment, messages)).rejects.toBeInstanceOf(
          InjectedCrash,
        );
        // The retry comes once the lease has lapsed, from another process.
        const retry = new SegmentExtractor({
          store,
          extractor: new KeyphraseExtractor(),
          model: "keyphrases",
          promptVersion: "test",
          leaseMs: 60_000,
          now: () => Date.UTC(2026, 0, 2),
        });
        const outcome = await retry.extract(segment, messages);
        expect(
          outcome.result.candidates.map((x) => x.topic),
          `crash after call ${crashAt}`,
        ).toContain("bootloader");
        expect(await offline(store, c, ["bootloader"]), `crash after call ${crashAt}`).toEqual({
          segments: 1,
          frequencies: { bootloader: 1 },
        });
      }
    });
  });
}
