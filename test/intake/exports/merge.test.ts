import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExportError, readExports } from "convoseg/exports";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readAll, tempDir } from "./support.js";

const BASE = Date.UTC(2024, 0, 10, 10);

/** A DiscordChatExporter file of `messages` (index i: the i-th minute, author i % 3). */
function dceFile(path: string, items: { n: number; text: string }[]): string {
  const messages = items.map(({ n, text }) => ({
    id: String(1195000000000000000n + BigInt(n)),
    type: "Default",
    timestamp: new Date(BASE + n * 60_000).toISOString(),
    content: text,
    author: { id: `80000000000000000${n % 3}`, name: `user${n % 3}`, nickname: null, isBot: false },
    attachments: [],
  }));
  writeFileSync(
    path,
    JSON.stringify({
      guild: { id: "1", name: "g" },
      channel: { id: "910000000000000001", type: "GuildTextChat", name: "general" },
      messages,
    }),
  );
  return path;
}

const items = fc.uniqueArray(
  fc.record({ n: fc.integer({ min: 0, max: 500 }), text: fc.string({ maxLength: 20 }) }),
  { selector: (m) => m.n, minLength: 1, maxLength: 30 },
);

describe("merging inputs by id", () => {
  it("reading an export twice, or overlapping pieces of it, gives the export once", async () => {
    await fc.assert(
      fc.asyncProperty(items, fc.nat(), fc.nat(), async (list, a, b) => {
        const dir = tempDir();
        const whole = dceFile(join(dir, "whole.json"), list);
        // Two overlapping date ranges, as users export them: [0, hi) and [lo, end).
        const lo = Math.min(a, b) % list.length;
        const hi = lo + 1 + (Math.max(a, b) % (list.length - lo));
        const first = dceFile(join(dir, "first.json"), list.slice(0, hi));
        const second = dceFile(join(dir, "second.json"), list.slice(lo));
        const once = await readAll([whole]);
        const twice = await readAll([whole, whole]);
        const pieces = await readAll([second, first]);
        expect(twice.messages).toEqual(once.messages);
        expect(twice.report.duplicates).toBe(list.length);
        expect(pieces.messages).toEqual(once.messages);
        expect(pieces.report.duplicates).toBe(hi - lo);
        expect(pieces.report.conflicts).toEqual([]);
      }),
      { numRuns: 25 },
    );
  });

  it("WhatsApp ids survive re-import and a split of the file at any new minute", async () => {
    const lines = fc.array(
      fc.record({
        minutes: fc.integer({ min: 0, max: 3 }),
        author: fc.constantFrom("Ana", "Ben", "+1 555-0100"),
        text: fc.constantFrom("ok", "see you", "ok: fine"),
      }),
      { minLength: 2, maxLength: 25 },
    );
    await fc.assert(
      fc.asyncProperty(lines, fc.nat(), async (list, cutSeed) => {
        let minute = 0;
        const rendered = list.map((l, i) => {
          minute += i === 0 ? 0 : l.minutes;
          const hh = String(10 + Math.floor(minute / 60)).padStart(2, "0");
          const mm = String(minute % 60).padStart(2, "0");
          return { minute, line: `13/01/2024, ${hh}:${mm} - ${l.author}: ${l.text}` };
        });
        // A split between two lines of different minutes (exact repeats share theirs).
        const cuts = rendered
          .map((_, i) => i)
          .filter((i) => i > 0 && rendered[i].minute !== rendered[i - 1].minute);
        const dir = tempDir();
        const write = (sub: string, part: typeof rendered) => {
          mkdirSync(join(dir, sub));
          const path = join(dir, sub, "chat.txt");
          writeFileSync(path, `${part.map((r) => r.line).join("\n")}\n`);
          return path;
        };
        const whole = await readAll([write("whole", rendered)]);
        expect((await readAll([write("again", rendered)])).messages).toEqual(whole.messages);
        expect(whole.messages).toHaveLength(list.length);
        if (cuts.length === 0) return;
        const cut = cuts[cutSeed % cuts.length];
        const split = await readAll([
          write("b", rendered.slice(cut)),
          write("a", rendered.slice(0, cut)),
        ]);
        expect(split.messages).toEqual(whole.messages);
      }),
      { numRuns: 25 },
    );
  });

  it("is read once, reports progress without text, and refuses an unknown zone at once", async () => {
    const dir = tempDir();
    const file = dceFile(join(dir, "x.json"), [{ n: 1, text: "private words" }]);
    const seen: unknown[] = [];
    const reading = readExports([file], { timezone: "UTC", onProgress: (p) => seen.push(p) });
    for await (const _ of reading) {
      // drained
    }
    expect(() => reading[Symbol.asyncIterator]()).toThrow(ExportError);
    expect(seen).toEqual([
      { input: file, format: "discord", file, filesDone: 0, filesTotal: 1, messages: 0 },
    ]);
    expect(JSON.stringify(seen)).not.toContain("private");
    expect(() => readExports([file], { timezone: "Mars/Olympus" })).toThrow(
      expect.objectContaining({ name: "ExportTimezoneError", code: "EXPORT_UNKNOWN_TIMEZONE" }),
    );
  });
});
