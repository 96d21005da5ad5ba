import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BATCH_SIZE, readExports, toChatMessage } from "convoseg/exports";
import { parseChatMessage } from "convoseg/messages";
import { describe, expect, it } from "vitest";
import { fixture, readAll, tempDir } from "./support.js";

const EVERY_FORMAT = [
  fixture("slack", "workspace"),
  fixture("discord", "server"),
  fixture("telegram", "full-export.json"),
  fixture("mattermost", "bulk.jsonl"),
  fixture("whatsapp"),
  fixture("irc"),
];

describe("exported messages as chat input", () => {
  it("are chat input lines as they are: parseChatMessage reads what toChatMessage gives", async () => {
    const { messages } = await readAll(EVERY_FORMAT);
    expect(new Set(messages.map((m) => m.platform))).toEqual(
      new Set(["slack", "discord", "telegram", "mattermost", "whatsapp", "irc"]),
    );
    for (const message of messages) {
      const line = JSON.stringify(message);
      expect(parseChatMessage(JSON.parse(line))).toEqual(toChatMessage(message));
      expect(Object.keys(message).slice(0, 6)).toEqual([
        "id",
        "ts",
        "channel",
        "channelName",
        "user",
        "text",
      ]);
    }
  });

  it("come in batches in the same order as one by one", async () => {
    const one = await readAll(EVERY_FORMAT);
    const batched = [];
    for await (const batch of readExports(EVERY_FORMAT, { timezone: "UTC" }).batches()) {
      expect(batch.length).toBeGreaterThan(0);
      expect(batch.length).toBeLessThanOrEqual(BATCH_SIZE);
      batched.push(...batch);
    }
    expect(batched).toEqual(one.messages);
  });

  it("carry no lone surrogate, whatever the export's escapes, and read a leading BOM", async () => {
    const file = join(tempDir(), "result.json");
    writeFileSync(
      file,
      '\uFEFF{"name":"x\\ud800","type":"personal_chat","id":5,"messages":[{"id":1,"type":"message","date_unixtime":"1704880800","from":"A\\udc00","from_id":"user1","text":"broken \\ud800 text"}]}',
    );
    const { messages } = await readAll([file]);
    expect(messages).toHaveLength(1);
    expect(messages[0].text).toBe("broken \uFFFD text");
    expect(messages[0].user).toBe("A\uFFFD");
    expect(messages[0].channelName).toBe("x\uFFFD");
    expect(() => parseChatMessage(messages[0])).not.toThrow();
  });
});
