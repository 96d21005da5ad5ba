/**
 * Hostile and damaged inputs end as a named error or a note that says what was done: never a
 * hang, a crash, unbounded memory or silently changed text.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExportError, ExportFormatError, ExportInputError } from "convoseg/exports";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { writeZip } from "../../support/zip.js";
import { readAll, tempDir } from "./support.js";

const MESSAGE = '{"id":"1","timestamp":"2024-01-01T00:00:00Z","author":{"id":"2","name":"ana"}';

describe("bounds on what an export may make the reader hold", () => {
  it("refuses a JSON message longer than the bound at its entry, without holding the rest", async () => {
    const file = join(tempDir(), "huge.json");
    // 9 MiB of one message's text: no chat message is that long.
    writeFileSync(
      file,
      `{"guild":{"id":"1"},"channel":{"id":"5","type":"GuildTextChat","name":"x"},"messages":[${MESSAGE},"content":"${"a".repeat(9 * 1024 * 1024)}"}]}`,
    );
    await expect(readAll([file])).rejects.toMatchObject({
      name: "ExportFormatError",
      at: expect.stringMatching(/^messages\[0\] \(character \d+\)$/),
      field: "entry",
      reason: expect.stringMatching(/^longer than 8 MiB: no chat message is that long/),
    });
  });

  it("walks a Slack users.json entry by entry: a huge one is refused at its entry, never held whole", async () => {
    const zip = join(tempDir(), "bomb.zip");
    // Deflates to a few kB; read whole it would be parsed as one 9 MiB document.
    await writeZip(zip, {
      "channels.json": '[{"id":"C1","name":"general"}]',
      "users.json": `[{"id":"U1","name":"ana"},{"id":"U2","name":"${"b".repeat(9 * 1024 * 1024)}"}]`,
      "general/2024-01-01.json":
        '[{"type":"message","user":"U1","text":"hi","ts":"1704067200.000100"}]',
    });
    await expect(readAll([zip])).rejects.toMatchObject({
      name: "ExportFormatError",
      file: `${zip}!users.json`,
      at: expect.stringMatching(/^\[1\] /),
      field: "entry",
    });
    await writeZip(zip, {
      "channels.json": '[{"id":"C1","name":"general"}]',
      "users.json": '{"U1":{"name":"ana"}}',
    });
    await expect(readAll([zip])).rejects.toMatchObject({
      file: `${zip}!users.json`,
      field: "users.json",
      reason: "expected a JSON array (got an object)",
    });
  });

  it("refuses a text line longer than the bound, naming the line (a file with no line end)", async () => {
    const file = join(tempDir(), "WhatsApp Chat with Zero.txt");
    writeFileSync(file, `12/31/23, 9:41 PM - Ana: hi\n${"\0".repeat(5 * 1024 * 1024)}`);
    const error = await readAll([{ path: file, format: "whatsapp" }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportFormatError);
    expect(error).toMatchObject({ file, at: "line 2", field: "line" });
  });

  it("refuses a pipe and a device instead of waiting on them for good", async () => {
    const fifo = join(tempDir(), "chat.txt");
    execFileSync("mkfifo", [fifo]);
    for (const path of [fifo, "/dev/zero"]) {
      await expect(readAll([{ path, format: "whatsapp" }])).rejects.toMatchObject({
        name: "ExportInputError",
        message: `${path}: not a regular file or folder (a pipe or a device?)`,
      });
    }
    await expect(readAll(["/dev/zero"])).rejects.toBeInstanceOf(ExportInputError);
  });

  it("refuses a channel or message id longer than the store's keys take, per message", async () => {
    const file = join(tempDir(), "long-id.json");
    const channel = "7".repeat(3000);
    writeFileSync(
      file,
      `{"guild":{"id":"1"},"channel":{"id":"${channel}","type":"GuildTextChat","name":"x"},"messages":[${MESSAGE},"content":"hi"}]}`,
    );
    const { messages, report } = await readAll([file]);
    expect(messages).toEqual([]);
    expect(report.skippedItems).toEqual([
      expect.objectContaining({
        field: "channel",
        reason: "not a usable channel id: takes 3000 bytes as UTF-8, over the 1024 an id may take",
      }),
    ]);
  });
});

describe("times", () => {
  it("refuses a message dated more than a day after this machine's clock, per message", async () => {
    const file = join(tempDir(), "future.json");
    const at = (ts: string, id: string) =>
      `{"id":"${id}","timestamp":"${ts}","author":{"id":"2","name":"ana"},"content":"hi"}`;
    writeFileSync(
      file,
      `{"guild":{"id":"1"},"channel":{"id":"5","type":"GuildTextChat","name":"x"},"messages":[${at("2024-01-01T00:00:00Z", "1")},${at("2286-11-20T17:46:40Z", "2")}]}`,
    );
    const { messages, report } = await readAll([file]);
    expect(messages.map((m) => m.id)).toEqual(["1"]);
    expect(report.skippedItems).toEqual([
      expect.objectContaining({
        field: "ts",
        reason: expect.stringMatching(/^2286-11-20T17:46:40\.000Z is more than a day after/),
      }),
    ]);
  });
});

describe("text that is not UTF-8", () => {
  it("reads a Latin-1 line as Windows-1252 and says so, instead of U+FFFD", async () => {
    const file = join(tempDir(), "WhatsApp Chat with Caf\u00e9.txt");
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from("12/31/23, 9:41 PM - Ana: plain\n"),
        Buffer.from("12/31/23, 9:42 PM - Jos\xe9: caf\xe9 cr\xe8me \x80\n", "latin1"),
        Buffer.from("12/31/23, 9:43 PM - Ana: d\u00e9j\u00e0 UTF-8\n"),
      ]),
    );
    const { messages, report } = await readAll([file]);
    expect(messages.map((m) => [m.user, m.text])).toEqual([
      ["Ana", "plain"],
      ["Jos\u00e9", "caf\u00e9 cr\u00e8me \u20ac"],
      ["Ana", "d\u00e9j\u00e0 UTF-8"],
    ]);
    expect(report.notes).toEqual([
      `${file}: not UTF-8 text (line 2 the first such): those lines were read as Windows-1252 (Latin-1); save the file as UTF-8 if their letters look wrong`,
    ]);
  });
});

describe("a damaged ZIP", () => {
  it("ends as an export error or a read, never another error, whatever bytes are damaged", async () => {
    const dir = tempDir();
    const good = join(dir, "good.zip");
    const lines = Array.from({ length: 60 }, (_, i) => ({
      type: "message",
      user: "U1",
      text: `message ${i} about grub`,
      ts: `${1_700_000_000 + i}.000100`,
    }));
    await writeZip(good, {
      "users.json": '[{"id":"U1","name":"ana"}]',
      "channels.json": '[{"id":"C1","name":"general"}]',
      "general/2023-11-14.json": JSON.stringify(lines),
    });
    const bytes = readFileSync(good);
    const damaged = join(dir, "damaged.zip");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (flips) => {
          const copy = Buffer.from(bytes);
          for (const [at, value] of flips) copy[at] = value;
          writeFileSync(damaged, copy);
          try {
            await readAll([damaged]);
          } catch (error) {
            expect(error).toBeInstanceOf(ExportError);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
