import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixture, readAll, tempDir } from "./support.js";

const FAMILY = fixture("whatsapp", "WhatsApp Chat with Family.txt");

function chat(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

describe("WhatsApp chat text", () => {
  it("reads M/D/YY with 12 h times, continuation lines, system lines and phone authors", async () => {
    const { messages } = await readAll([FAMILY], { timezone: "America/New_York" });
    // Messages of one minute keep the file's order, a millisecond apart.
    expect(messages.map((m) => [m.ts, m.user, m.kind])).toEqual([
      ["2023-12-25T02:41:00.000Z", null, "system"],
      ["2023-12-25T02:41:00.001Z", null, "system"],
      ["2023-12-25T02:42:00.000Z", "Mom", "user"],
      ["2023-12-25T02:42:00.001Z", "Mom", "user"],
      ["2023-12-25T02:43:00.000Z", "+1 555-0100", "user"],
      ["2023-12-25T05:05:00.000Z", "Dad - the elder", "user"],
      ["2023-12-25T18:15:00.000Z", null, "system"],
      ["2024-01-01T04:59:00.000Z", "Mom", "user"],
    ]);
    expect(messages[4].text).toBe(
      "Thanks! Dinner at 7: don't be late\nwith a second line\nand a third",
    );
    expect(messages[6].text).toBe('Mom changed the subject from "Fam" to "Family: 2024"');
    expect(messages[1].text).toBe('Mom created group "Family"');
    expect(new Set(messages.map((m) => m.channel))).toEqual(new Set(["Family"]));
    // Exact repeats (same minute, author, text) stay two messages with distinct ids.
    expect(messages[2].id).not.toBe(messages[3].id);
  });

  it("detects D/M/YYYY with 24 h times per file", async () => {
    const { messages } = await readAll([fixture("whatsapp", "club-dmy.txt")]);
    expect(messages.map((m) => m.ts)).toEqual([
      "2023-12-25T21:41:00.000Z",
      "2023-12-25T21:42:00.000Z",
      "2024-01-01T00:00:00.000Z",
    ]);
  });

  it("reads the bracketed iOS form: seconds, marks, system lines under the group's name", async () => {
    const { messages, report } = await readAll([fixture("whatsapp", "_chat.txt")]);
    expect(messages.map((m) => [m.ts, m.user, m.text])).toEqual([
      ["2024-02-03T10:00:00.000Z", null, "Messages and calls are end-to-end encrypted."],
      ["2024-02-03T10:00:05.000Z", "Ana", "is 3 Feb or 2 Mar?"],
      ["2024-02-03T10:01:00.000Z", "Ben", "image omitted"],
      ["2024-02-04T09:00:00.000Z", "Ana", "12h with a narrow space? no, 24h file"],
    ]);
    // `_chat.txt` is named after its folder; no date told day from month, which the report says.
    expect(messages[0].channel).toBe("whatsapp");
    expect(report.notes).toEqual([
      "WhatsApp: a file's dates read as D/M/Y; no date tells day from month",
    ]);
  });

  it("takes the order under which dates never go backwards when no number is over 12", async () => {
    const path = chat(
      "ambiguous.txt",
      "1/2/24, 10:00 - A: x\n1/3/24, 10:00 - A: y\n1/4/24, 10:00 - A: z\n2/1/24, 10:00 - A: w\n",
    );
    const { messages } = await readAll([path]);
    // D/M would go 1 Feb, 1 Mar, 1 Apr, 2 Jan: backwards; M/D is Jan 2, 3, 4, Feb 1.
    expect(messages.map((m) => m.ts.slice(0, 10))).toEqual([
      "2024-01-02",
      "2024-01-03",
      "2024-01-04",
      "2024-02-01",
    ]);
  });

  it("reads p.m. with spaces and dots, dotted dates and YYYY-MM-DD", async () => {
    const path = chat(
      "variants.txt",
      "13.02.24, 9:05 p. m. - Ana: dotted\n2024-02-14, 21:06 - Ben: iso\n14/02/24, 12:00\u202fa.m. - Ana: midnight\n",
    );
    const { messages } = await readAll([path]);
    expect(messages.map((m) => m.ts)).toEqual([
      "2024-02-13T21:05:00.000Z",
      "2024-02-14T00:00:00.000Z",
      "2024-02-14T21:06:00.000Z",
    ]);
  });

  it("starts a message at every line with a date and a 12-hour time in the locales WhatsApp writes", async () => {
    // Spanish writes the hour after midnight as 00 with `a. m.`; the line must not be glued on.
    const path = chat(
      "locales.txt",
      [
        "13/02/24, 11:58 p. m. - Ana: before midnight",
        "14/02/24, 00:15 a. m. - Ben: after midnight",
        "14/02/24, 12:30 p. m. - Ana: noon",
        "14.02.24, 3:05 nachm. - Ben: German",
        "14/02/24, 9:07 μ.μ. - Ana: Greek",
        "[14/02/24, 午後3:06:00] Ben: Japanese",
        "14/02/24, 下午4:10 - Ana: Chinese",
        "14/02/24, 5:20 م - Ben: Arabic",
        "",
      ].join("\n"),
    );
    const { messages } = await readAll([path]);
    expect(messages.map((m) => [m.ts, m.user, m.text])).toEqual([
      ["2024-02-13T23:58:00.000Z", "Ana", "before midnight"],
      ["2024-02-14T00:15:00.000Z", "Ben", "after midnight"],
      ["2024-02-14T12:30:00.000Z", "Ana", "noon"],
      ["2024-02-14T15:05:00.000Z", "Ben", "German"],
      ["2024-02-14T15:06:00.000Z", "Ben", "Japanese"],
      ["2024-02-14T16:10:00.000Z", "Ana", "Chinese"],
      ["2024-02-14T17:20:00.000Z", "Ben", "Arabic"],
      ["2024-02-14T21:07:00.000Z", "Ana", "Greek"],
    ]);
  });

  it("reads times in the configured zone, across a DST change", async () => {
    const path = chat("dst.txt", "30/03/2024, 12:00 - A: winter\n31/03/2024, 12:00 - A: summer\n");
    const { messages, report } = await readAll([path], { timezone: "Europe/Paris" });
    expect(messages.map((m) => m.ts)).toEqual([
      "2024-03-30T11:00:00.000Z",
      "2024-03-31T10:00:00.000Z",
    ]);
    expect(report).toMatchObject({ timezone: "Europe/Paris", zonelessTimes: 2 });
  });

  it("reports text before the first dated line, and refuses mixed date orders naming the line", async () => {
    const path = chat("head.txt", "exported by someone\n1/2/24, 10:00 - A: x\n");
    const { report } = await readAll([{ path, format: "whatsapp" }]);
    expect(report.skippedItems).toEqual([
      { file: path, at: "line 1", field: "date", reason: "text before the first dated line" },
    ]);
    const mixed = fixture("malformed", "whatsapp-mixed.txt");
    await expect(readAll([mixed])).rejects.toMatchObject({
      name: "ExportFormatError",
      file: mixed,
      at: "line 3",
      field: "date",
    });
  });

  it("gives overlapping exports of one chat the same ids: merged, nothing twice", async () => {
    const early = chat("early.txt", "1/13/24, 10:00 - A: one\n1/13/24, 10:01 - B: two\n");
    const late = chat("late.txt", "1/13/24, 10:01 - B: two\n1/14/24, 10:02 - A: three\n");
    const { messages, report } = await readAll([
      { path: early, format: "whatsapp" },
      { path: late, format: "whatsapp" },
    ]);
    // Different file names are different channels: the chat's name is what ties them.
    expect(new Set(messages.map((m) => m.channel)).size).toBe(2);
    const sameName = (await readAll([early])).messages.find((m) => m.text === "two");
    const fromLate = (await readAll([late])).messages.find((m) => m.text === "two");
    expect(fromLate?.id).toBe(sameName?.id);
    expect(report.duplicates).toBe(0);
  });
});
