/** The poller function's environment: every variable read, each bad one refused by name. */

import { DiscordConfigError, readDiscordConfig } from "convoseg/connectors/discord";
import { describe, expect, it } from "vitest";

const ENV = {
  DISCORD_CHANNELS: "111, 222",
  DISCORD_TOKEN_SECRET: "arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf",
  CURSORS_TABLE: "cursors",
  INGEST_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/ingest",
  MESSAGES_TABLE: "messages",
};

describe("readDiscordConfig", () => {
  it("reads the channels, tables, queue and defaults", () => {
    expect(readDiscordConfig(ENV)).toEqual({
      channels: ["111", "222"],
      tokenSecret: ENV.DISCORD_TOKEN_SECRET,
      cursorsTable: "cursors",
      ingestQueueUrl: ENV.INGEST_QUEUE_URL,
      messagesTable: "messages",
      rereadWindow: 200,
      threads: true,
      marginMs: 20_000,
    });
    const full = readDiscordConfig({
      ...ENV,
      REREAD_WINDOW: "0",
      BACKFILL_FROM: "2025-06-01T00:00:00Z",
      DISCORD_THREADS: "false",
    });
    expect(full).toMatchObject({
      rereadWindow: 0,
      backfillFrom: Date.UTC(2025, 5, 1),
      threads: false,
    });
  });

  it.each([
    ["DISCORD_CHANNELS", { DISCORD_CHANNELS: "" }],
    ["DISCORD_CHANNELS", { DISCORD_CHANNELS: "111,general" }],
    ["DISCORD_TOKEN_SECRET", { DISCORD_TOKEN_SECRET: " " }],
    ["CURSORS_TABLE", { CURSORS_TABLE: undefined }],
    ["REREAD_WINDOW", { REREAD_WINDOW: "-1" }],
    ["BACKFILL_FROM", { BACKFILL_FROM: "last week" }],
    ["BACKFILL_FROM", { BACKFILL_FROM: "2001-01-01T00:00:00Z" }],
  ])("refuses a bad %s, naming it", (name, change) => {
    let caught: unknown;
    try {
      readDiscordConfig({ ...ENV, ...change });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DiscordConfigError);
    expect((caught as DiscordConfigError).setting).toBe(name);
    expect((caught as Error).message.startsWith(`${name}: `)).toBe(true);
  });
});
