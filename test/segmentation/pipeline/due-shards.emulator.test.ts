/**
 * The due index's shard count as a deploy setting: the shard function, the shards the tick
 * reads, and a change of the count in the middle of a run (both directions) against DynamoDB
 * Local and the SQS emulator, with writers on the old and the new count interleaved.
 */

import type { TickSettings } from "convoseg/pipeline";
import {
  checkDueShards,
  DUE_SHARDS,
  dueShardOf,
  dueShardsRead,
  MAX_DUE_SHARDS,
} from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { LocalPipeline, MetricTotals } from "../../../local/pipeline.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { testSqsClient } from "../../support/sqs.js";
import { channelBudget } from "../../support/tick-budget.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);

describe("due index shards", () => {
  const channels = Array.from({ length: 500 }, (_, i) => `channel-${i}`);

  it("defaults to 4 shards, today's hash", () => {
    expect(DUE_SHARDS).toBe(4);
    for (const channel of channels) expect(dueShardOf(channel)).toBe(dueShardOf(channel, 4));
    expect(new Set(channels.map((c) => dueShardOf(c)))).toEqual(new Set(["0", "1", "2", "3"]));
  });

  it.each([1, 2, 3, 8, 64, 1000])("puts every channel in one of %i shards, stably", (shards) => {
    const used = new Set<string>();
    for (const channel of channels) {
      const shard = dueShardOf(channel, shards);
      expect(Number(shard)).toBeGreaterThanOrEqual(0);
      expect(Number(shard)).toBeLessThan(shards);
      expect(dueShardOf(channel, shards)).toBe(shard);
      used.add(shard);
    }
    if (shards <= 8) expect(used.size).toBe(shards);
  });

  it("reads the current shards and, while migrating, every shard of the previous count", () => {
    expect(dueShardsRead(4)).toEqual(["0", "1", "2", "3"]);
    expect(dueShardsRead(4, null)).toEqual(["0", "1", "2", "3"]);
    expect(dueShardsRead(2, 8)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    expect(dueShardsRead(8, 4)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    // Whichever count wrote a channel's mark, its shard is read.
    for (const [current, previous] of [
      [2, 8],
      [8, 4],
      [5, 3],
    ]) {
      const read = new Set(dueShardsRead(current, previous));
      for (const channel of channels) {
        expect(read.has(dueShardOf(channel, current))).toBe(true);
        expect(read.has(dueShardOf(channel, previous))).toBe(true);
      }
    }
  });

  it.each([0, -1, 1.5, MAX_DUE_SHARDS + 1, Number.NaN])("refuses %s shards", (shards) => {
    expect(() => checkDueShards(shards)).toThrow("dueShards must be an integer from 1 to 1000");
    const client = testDynamoDbClient();
    expect(() => new DynamoDbChannelStore({ client, tableName: "t", dueShards: shards })).toThrow(
      "dueShards",
    );
    expect(
      () => new DynamoDbChannelStore({ client, tableName: "t", previousDueShards: shards }),
    ).toThrow("previousDueShards");
  });
});

const settings: TickSettings = {
  maxSize: 50,
  settle: HOUR,
  minItems: 1,
  grace: 0,
  maxArrivalsPerChannel: 5000,
  leaseMs: 1,
  channelConcurrency: 2,
  holdTimeoutMs: 60_000,
};

/** Three messages of `channel`, a minute apart from `start`: one conversation. */
const chat = (channel: string, start: number, round: string) =>
  Array.from({ length: 3 }, (_, i) => ({
    id: `${channel}-${round}-${i}`,
    ts: start + i * MINUTE,
    channel,
    text: `${round} ${i}`,
  }));

describe("changing the due index's shard count mid-run", () => {
  it.each([
    [4, 8],
    [8, 2],
  ])(
    "from %i to %i loses nothing and delivers each segment once",
    async (before, after) => {
      const metrics = new MetricTotals();
      const old = await LocalPipeline.create({
        dynamodb: testDynamoDbClient(),
        sqs: testSqsClient(),
        settings,
        metrics,
        dueShards: before,
        prefix: "shards",
      });
      const channels = Array.from({ length: 24 }, (_, i) => `ch-${i}`);
      const sent: string[] = [];
      const delivered: string[] = [];
      const drain = async (local: LocalPipeline) => {
        for (const segment of await local.drain()) delivered.push(...segment.messageIds);
      };
      /** A tick that may take only `channels` channels: the rest stay due where they were marked. */
      const partialTick = async (local: LocalPipeline, now: number, channels: number) => {
        await local.tick(now, channelBudget(channels));
        await drain(local);
      };
      const ingestRound = async (round: number, writers: LocalPipeline[]) => {
        const start = T0 + round * 3 * HOUR;
        for (const [i, channel] of channels.entries()) {
          const messages = chat(channel, start, `r${round}`);
          sent.push(...messages.map((m) => m.id));
          const result = await writers[i % writers.length].ingest(messages, start + 5 * MINUTE);
          expect(result.stored).toHaveLength(3);
        }
      };

      // Before the change: everything on the old count, one tick partway through.
      await ingestRound(0, [old]);
      await partialTick(old, T0 + 2 * HOUR, 4);

      // The rollout: the tick reads both counts; writers on either, interleaved; an old tick too.
      const migrating = old.withDueShards(after, before);
      await ingestRound(1, [old, migrating]);
      await partialTick(migrating, T0 + 5 * HOUR, 6);
      await partialTick(old, T0 + 5 * HOUR + MINUTE, 2);
      await ingestRound(2, [migrating, old, old]);
      if (after < before) {
        // Marks sit in shards the new count alone would not read: the tick reads and reports them.
        const stray = await migrating.channels.oldShardItems();
        expect(stray).toBeGreaterThan(0);
        const hiding = new Set(dueShardsRead(after));
        expect(channels.some((c) => !hiding.has(dueShardOf(c, before)))).toBe(true);
      }
      await partialTick(migrating, T0 + 8 * HOUR, 8);
      if (after < before) expect(metrics.get("DueItemsInOldShards")).toBeGreaterThan(0);

      // Every writer on the new count: ticks move what is left; then the previous count goes.
      await ingestRound(3, [migrating]);
      for (
        let now = T0 + 11 * HOUR;
        (await migrating.channels.earliestDue()) !== null;
        now += HOUR
      ) {
        await partialTick(migrating, now, 9);
      }
      expect(await migrating.channels.oldShardItems()).toBe(0);
      const done = old.withDueShards(after);
      await ingestRound(5, [done]);
      for (let now = T0 + 17 * HOUR; (await done.channels.earliestDue()) !== null; now += HOUR) {
        await partialTick(done, now, 9);
      }

      expect(delivered.length).toBe(new Set(delivered).size);
      expect([...delivered].sort()).toEqual([...sent].sort());
      expect(metrics.get("ChannelErrors")).toBe(0);
      expect(metrics.get("MissingMessages")).toBe(0);
      expect(metrics.get("LateMessages")).toBe(0);
    },
    120_000,
  );
});
