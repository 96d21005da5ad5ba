import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectFormat, ExportInputError, parseExportFormat } from "convoseg/exports";
import { describe, expect, it } from "vitest";
import { wallClockIn } from "../../../lib/intake/exports/timezone.js";
import { writeZip } from "../../support/zip.js";
import { fixture, readAll, tempDir } from "./support.js";

describe("format detection", () => {
  it("names each fixture's format from its names and first bytes", async () => {
    const zip = join(tempDir(), "slack.zip");
    await writeZip(zip, { "channels.json": "[]", "users.json": "[]" });
    const cases: [string, string][] = [
      [fixture("slack", "workspace"), "slack"],
      [zip, "slack"],
      [fixture("discord", "server"), "discord"],
      [fixture("discord", "edited-general.json"), "discord"],
      [fixture("telegram", "result.json"), "telegram"],
      [fixture("telegram", "full-export.json"), "telegram"],
      [fixture("mattermost", "bulk.jsonl"), "mattermost"],
      [fixture("whatsapp", "WhatsApp Chat with Family.txt"), "whatsapp"],
      [fixture("whatsapp", "_chat.txt"), "whatsapp"],
      [fixture("irc", "#ubuntu.log"), "irc"],
    ];
    for (const [path, format] of cases)
      expect([path, await detectFormat(path)]).toEqual([path, format]);
  });

  it("refuses what it cannot name, saying what to do", async () => {
    const dir = tempDir();
    const notes = join(dir, "notes.txt");
    writeFileSync(notes, "just some notes\n");
    await expect(detectFormat(notes)).rejects.toThrow(/give --format/);
    await expect(detectFormat(join(dir, "missing"))).rejects.toBeInstanceOf(ExportInputError);
    await expect(readAll([{ path: join(dir, "missing"), format: "whatsapp" }])).rejects.toThrow(
      expect.objectContaining({ name: "ExportInputError", input: join(dir, "missing") }),
    );
    await expect(detectFormat(fixture("whatsapp"))).resolves.toBe("whatsapp");
    await expect(detectFormat(fixture())).rejects.toThrow(/mixing/);
  });

  it("takes chat input lines for no export, even with a Discord bot's guild and channel", async () => {
    const dir = tempDir();
    const lines = join(dir, "chat.jsonl");
    const line = { id: "1", ts: 1, channel: "general", guild: "g", text: "hi", about: "x" };
    writeFileSync(lines, `${JSON.stringify(line)}\n${JSON.stringify({ ...line, id: "2" })}\n`);
    await expect(detectFormat(lines)).rejects.toBeInstanceOf(ExportInputError);
    const oneLine = join(dir, "minified.json");
    writeFileSync(
      oneLine,
      JSON.stringify({ guild: { id: "1" }, channel: { id: "2" }, messages: [] }),
    );
    await expect(detectFormat(oneLine)).resolves.toBe("discord");
  });

  it("takes auto and the six format names, and refuses others, naming them", () => {
    expect(parseExportFormat("auto")).toBe("auto");
    expect(parseExportFormat("mattermost")).toBe("mattermost");
    expect(parseExportFormat("irc")).toBe("irc");
    expect(() => parseExportFormat("hexchat")).toThrow(
      expect.objectContaining({
        code: "EXPORT_UNKNOWN_FORMAT",
        message: expect.stringContaining("mattermost, whatsapp, irc"),
      }),
    );
  });
});

describe("zone-less times", () => {
  it("reads wall times in a zone: DST gaps move forward, repeated hours take the earlier", () => {
    const paris = wallClockIn("Europe/Paris");
    expect(new Date(paris(2024, 1, 15, 12, 0, 0)).toISOString()).toBe("2024-01-15T11:00:00.000Z");
    expect(new Date(paris(2024, 7, 15, 12, 0, 0)).toISOString()).toBe("2024-07-15T10:00:00.000Z");
    expect(new Date(paris(2024, 3, 31, 2, 30, 0)).toISOString()).toBe("2024-03-31T01:30:00.000Z");
    expect(new Date(paris(2024, 10, 27, 2, 30, 0)).toISOString()).toBe("2024-10-27T00:30:00.000Z");
    const kolkata = wallClockIn("Asia/Kolkata");
    expect(new Date(kolkata(2024, 1, 1, 0, 0, 0)).toISOString()).toBe("2023-12-31T18:30:00.000Z");
  });
});
