import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { MemoryStore, textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { type IngestResult, ingest, type ProducerGrant } from "convoseg/ingest";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import {
  REEXTRACT_ATTRIBUTE,
  REEXTRACT_REPLACING_ATTRIBUTE,
  SegmentExtractor,
} from "convoseg/knowledge/write";
import { parseSegmentBody } from "convoseg/pipeline/contract";
import { createChannelsTable, dueShardOf } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createIngestHandler } from "../../functions/ingest/ingest-handler.js";
import { createSegmentQueue } from "../../local/sqs.js";
import { createResultsTestTable, segmentOf } from "../knowledge/fixtures.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { drainQueue, testSqsClient, uniqueQueueName } from "../support/sqs.js";

const T = Date.UTC(2025, 2, 3, 8);
const tableName = `ingest-${Date.now().toString(36)}`;
const channelsTable = `${tableName}-channels`;
const client = testDynamoDbClient();
const store = new DynamoDbStore({ client, tableName });

/** The deployed handler module, loaded the way Lambda loads it: configured by environment. */
async function loadHandler(environment: Record<string, string | undefined>) {
  vi.resetModules();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  return (await import("../../functions/ingest/handler.js")).handler;
}

const awsEnvironment = () => ({
  AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  MESSAGES_TABLE: tableName,
  CHANNELS_TABLE: channelsTable,
});

const record = (messageId: string, body: string): SQSRecord =>
  ({
    messageId,
    body,
    receiptHandle: messageId,
    attributes: {},
    messageAttributes: {},
  }) as SQSRecord;

beforeAll(async () => {
  await createMessagesTable(client, tableName);
  await createChannelsTable(client, channelsTable);
});

describe("ingest Lambda", () => {
  it("fails at cold start, naming the missing setting", async () => {
    await expect(loadHandler({ ...awsEnvironment(), MESSAGES_TABLE: "" })).rejects.toThrow(
      "ingest: environment variable MESSAGES_TABLE must be set",
    );
    await expect(loadHandler({ ...awsEnvironment(), CHANNELS_TABLE: " " })).rejects.toThrow(
      'ingest: environment variable CHANNELS_TABLE must not be blank (got " ")',
    );
  });

  it.each(["0", "1001", "eight"])(
    "fails at cold start on DUE_SHARDS=%s, naming it",
    async (value) => {
      await expect(loadHandler({ ...awsEnvironment(), DUE_SHARDS: value })).rejects.toThrow(
        `ingest: environment variable DUE_SHARDS must be an integer from 1 to 1000 (got "${value}")`,
      );
    },
  );

  it.each(["0", "10001", "many"])(
    "fails at cold start on MAX_BATCH=%s, naming it",
    async (value) => {
      await expect(loadHandler({ ...awsEnvironment(), MAX_BATCH: value })).rejects.toThrow(
        `ingest: environment variable MAX_BATCH must be an integer from 1 to 10000 (got "${value}")`,
      );
    },
  );

  it.each(["0", "36501", "30d", ""])(
    "fails at cold start on MESSAGE_RETENTION_DAYS=%j, naming it",
    async (value) => {
      await expect(
        loadHandler({ ...awsEnvironment(), MESSAGE_RETENTION_DAYS: value }),
      ).rejects.toThrow(
        `ingest: environment variable MESSAGE_RETENTION_DAYS must be a whole number of days from 1 to 36500 (got "${value}")`,
      );
    },
  );

  it.each(["0", "721", "1.5", "24h", ""])(
    "fails at cold start on CHANGE_HOLD_HOURS=%j, naming it",
    async (value) => {
      await expect(loadHandler({ ...awsEnvironment(), CHANGE_HOLD_HOURS: value })).rejects.toThrow(
        `ingest: environment variable CHANGE_HOLD_HOURS must be a whole number of hours from 1 to 720 (got "${value}")`,
      );
    },
  );

  it("refuses a message whose deletion came first for CHANGE_HOLD_HOURS, and stores it after", async () => {
    // The store reads the clock it was built with: fake it before the cold start.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    try {
      const handler = await loadHandler({ ...awsEnvironment(), CHANGE_HOLD_HOURS: "1" });
      const channel = `held-${Date.now().toString(36)}`;
      const message = { id: "h1", ts: T, channel, text: "late" };
      await handler({ messages: [{ op: "delete", id: "h1", channel }] });
      vi.advanceTimersByTime(59 * 60_000);
      expect(await handler({ messages: [message] })).toMatchObject({ stored: [], deleted: [0] });
      vi.advanceTimersByTime(2 * 60_000);
      expect(await handler({ messages: [message] })).toMatchObject({ stored: [0], deleted: [] });
      expect((await store.read(channel)).map((m) => m.id)).toEqual(["h1"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each(["1.5", "-0.1", "half", ""])(
    "fails at cold start on REEXTRACT_CHANGED_SHARE=%j, naming it",
    async (value) => {
      await expect(
        loadHandler({ ...awsEnvironment(), REEXTRACT_CHANGED_SHARE: value }),
      ).rejects.toThrow(
        `ingest: environment variable REEXTRACT_CHANGED_SHARE must be a number from 0 (re-extract on every change) to 1 (never) (got "${value}")`,
      );
    },
  );

  it("fails at cold start on a blank SEGMENT_QUEUE_URL, or one without RESULTS_TABLE", async () => {
    await expect(
      loadHandler({ ...awsEnvironment(), RESULTS_TABLE: "r", SEGMENT_QUEUE_URL: " " }),
    ).rejects.toThrow('environment variable SEGMENT_QUEUE_URL must be a queue URL (got " ")');
    await expect(
      loadHandler({
        ...awsEnvironment(),
        RESULTS_TABLE: undefined,
        SEGMENT_QUEUE_URL: "http://q/segments.fifo",
      }),
    ).rejects.toThrow(/SEGMENT_QUEUE_URL is set without RESULTS_TABLE/);
  });

  it("sends a segment whose deleted share passes REEXTRACT_CHANGED_SHARE to SEGMENT_QUEUE_URL", async () => {
    const sqs = testSqsClient();
    const resultsTable = await createResultsTestTable(client);
    const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("ingest-reextract"), {
      fifo: true,
    });
    const { segment, messages } = segmentOf("shared", ["grub boot", "grub ok", "wifi", "wifi ok"]);
    const handler = await loadHandler({
      ...awsEnvironment(),
      AWS_ENDPOINT_URL_SQS: inject("sqsEndpoint"),
      RESULTS_TABLE: resultsTable,
      SEGMENT_QUEUE_URL: queueUrl,
      REEXTRACT_CHANGED_SHARE: "0.25",
    });
    const channel = segment.channel;
    await handler({
      messages: messages.map(({ id, ts, text, author }) => ({
        id,
        ts,
        text,
        channel,
        user: author,
      })),
    });
    const { result } = await new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName: resultsTable }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: "p",
    }).extract(segment, messages);
    const drop = (id: string) => handler({ messages: [{ op: "delete", id, channel }] });

    await drop("shared-m0");
    expect(await drainQueue(sqs, queueUrl)).toEqual([]);
    await drop("shared-m2");
    const sent = await drainQueue(sqs, queueUrl);
    expect(sent).toHaveLength(1);
    expect(sent[0].MessageAttributes?.[REEXTRACT_ATTRIBUTE]?.StringValue).toBe("true");
    expect(sent[0].MessageAttributes?.[REEXTRACT_REPLACING_ATTRIBUTE]?.StringValue).toBe(
      result.extractedAt,
    );
    expect(parseSegmentBody(sent[0].Body ?? "")).toMatchObject({
      segmentId: "shared",
      messageIds: ["shared-m1", "shared-m3"],
      reference: { table: tableName },
    });
  });

  it("refuses a direct batch over MAX_BATCH whole, saying how to send it", async () => {
    const handler = await loadHandler({ ...awsEnvironment(), MAX_BATCH: "2" });
    const messages = ["c1", "c2", "c3"].map((id) => ({ id, ts: T, channel: "capped", text: id }));
    await expect(handler({ messages })).rejects.toThrow(
      "ingest: a direct batch of 3 messages is over MAX_BATCH (2): send at most 2 per invocation, or use the ingest queue",
    );
    expect(await store.read("capped")).toEqual([]);
    expect(await handler({ messages: messages.slice(0, 2) })).toMatchObject({ stored: [0, 1] });
  });

  it("marks channels due in the shard of the deployment's DUE_SHARDS", async () => {
    const handler = await loadHandler({ ...awsEnvironment(), DUE_SHARDS: "8" });
    const channel =
      Array.from({ length: 100 }, (_, i) => `sharded-${i}`).find(
        (c) => Number(dueShardOf(c, 8)) >= 4,
      ) ?? "";
    await handler({ messages: [{ id: "x1", ts: T, channel, text: "hi" }] });
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: channelsTable,
        Key: { channel: { S: channel }, item: { S: "marks" } },
      }),
    );
    expect(Item?.dueShard?.S).toBe(dueShardOf(channel, 8));
  });

  it("writes a direct batch and reports each invalid message, writing the valid ones", async () => {
    const handler = await loadHandler(awsEnvironment());
    const result = (await handler({
      messages: [
        { id: "d1", ts: T, channel: "direct", user: "ana", text: "hello" },
        { id: "d2", channel: "direct" },
        { id: "d3", ts: T + 1, channel: "direct", text: "world" },
      ],
    })) as IngestResult;
    expect(result.stored).toEqual([0, 2]);
    expect(result.rejected).toEqual([{ index: 1, field: "ts", problem: expect.any(String) }]);
    const channels = new DynamoDbChannelStore({ client, tableName: channelsTable });
    expect((await channels.load("direct")).marks).toMatchObject({ marks: 1, holds: [] });
    expect(await store.read("direct")).toEqual([
      textMessage("user", "hello", { id: "d1", ts: T, author: "ana" }),
      textMessage("user", "world", { id: "d3", ts: T + 1 }),
    ]);
  });

  it("reports failed SQS records for retry and stores re-delivered records once", async () => {
    const handler = await loadHandler(awsEnvironment());
    const event: SQSEvent = {
      Records: [
        record("r1", JSON.stringify({ id: "s1", ts: T, channel: "queue", text: "a" })),
        record("r2", "{broken"),
        record("r3", JSON.stringify({ id: "s2", ts: T, channel: "queue", text: "b" })),
        record("r4", JSON.stringify({ id: "s3", ts: "soon", channel: "queue" })),
      ],
    };
    expect(await handler(event)).toEqual({
      batchItemFailures: [{ itemIdentifier: "r2" }, { itemIdentifier: "r4" }],
    });
    // SQS delivers at least once: the same records again change nothing.
    await handler({ Records: [event.Records[0], event.Records[2]] });
    expect((await store.read("queue")).map((m) => m.id)).toEqual(["s1", "s2"]);
  });

  it("sends only the bad record of a batch to retry (and so to the DLQ), storing its neighbours", async () => {
    const handler = await loadHandler(awsEnvironment());
    const event: SQSEvent = {
      Records: [
        record("ok-1", JSON.stringify({ id: "p1", ts: T, channel: "poison", text: "fine" })),
        record(
          "huge",
          JSON.stringify({ id: "p2", ts: T, channel: "poison", text: "x".repeat(500 * 1024) }),
        ),
        record("long-id", JSON.stringify({ id: "i".repeat(1023), ts: T, channel: "poison" })),
        record(
          "ok-2",
          JSON.stringify({ id: "p3", ts: T + 1, channel: "poison", text: "\ufffe kept" }),
        ),
      ],
    };
    expect(await handler(event)).toEqual({
      batchItemFailures: [{ itemIdentifier: "huge" }, { itemIdentifier: "long-id" }],
    });
    expect((await store.read("poison")).map((m) => m.id)).toEqual(["p1", "p3"]);
  });

  it("reports a re-sent id with other text as a conflict (edits are op lines), not a failure to retry", async () => {
    const handler = await loadHandler(awsEnvironment());
    await handler({ messages: [{ id: "e1", ts: T, channel: "edits", text: "first" }] });
    const edited = (await handler({
      messages: [{ id: "e1", ts: T, channel: "edits", text: "second" }],
    })) as IngestResult;
    expect(edited).toMatchObject({ stored: [], conflicts: [{ index: 0, fields: ["text"] }] });
    const viaQueue = await handler({
      Records: [record("r", JSON.stringify({ id: "e1", ts: T, channel: "edits", text: "third" }))],
    });
    expect(viaQueue).toEqual({ batchItemFailures: [] });
    expect((await store.read("edits")).map((m) => m.parts)).toEqual([
      [{ type: "text", text: "first" }],
    ]);
  });

  it("never overwrites a stored message: edits, repeats and racing writers leave the first item", async () => {
    const handler = await loadHandler(awsEnvironment());
    const key = { conversation: { S: "kept" }, key: { S: "m#k1" } };
    const item = async () =>
      (
        await client.send(
          new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
        )
      ).Item;
    // Writers racing on one id with different content: one version is stored, whole.
    const versions = Array.from({ length: 6 }, (_, i) => ({
      id: "k1",
      ts: T + (i % 2),
      channel: "kept",
      user: `u${i}`,
      text: `version ${i}`,
      ...(i % 3 === 0 ? { kind: "bot" } : {}),
    }));
    const results = (await Promise.all(
      versions.map((message) => handler({ messages: [message] })),
    )) as IngestResult[];
    expect(results.filter((r) => r.stored.length === 1)).toHaveLength(1);
    const first = await item();
    // Then every field changed, the same message again, and the same through the queue.
    const winner = versions[results.findIndex((r) => r.stored.length === 1)];
    for (const message of [
      { ...winner, ts: T + 60_000 },
      { ...winner, text: "edited" },
      { ...winner, user: "mallory" },
      { ...winner, kind: "system" },
      winner,
    ]) {
      const direct = (await handler({ messages: [message] })) as IngestResult;
      expect(direct.stored).toEqual([]);
      await handler({ Records: [record("again", JSON.stringify(message))] });
    }
    expect(await item()).toEqual(first);
    expect(await store.read("kept")).toHaveLength(1);
  });

  it("applies edits and deletions from the queue and direct calls; replays are not retried", async () => {
    const handler = await loadHandler(awsEnvironment());
    await handler({
      messages: [
        { id: "o1", ts: T, channel: "ops", user: "ana", text: "typo" },
        { id: "o2", ts: T + 1, channel: "ops", user: "bo", text: "regret" },
      ],
    });
    const event: SQSEvent = {
      Records: [
        record(
          "edit",
          JSON.stringify({ op: "edit", id: "o1", channel: "ops", text: "fixed", editedAt: T + 9 }),
        ),
        record("delete", JSON.stringify({ op: "delete", id: "o2", channel: "ops" })),
        record("bad-op", JSON.stringify({ op: "erase", id: "o2", channel: "ops" })),
      ],
    };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: "bad-op" }] });
    expect(await handler({ Records: event.Records.slice(0, 2) })).toEqual({
      batchItemFailures: [],
    });
    const direct = (await handler({
      messages: [
        { op: "delete", id: "o2", channel: "ops" },
        { op: "edit", id: "o1", channel: "ops", text: "older", editedAt: T },
      ],
    })) as IngestResult;
    expect(direct.changes).toEqual([
      { index: 0, op: "delete", status: "unchanged" },
      { index: 1, op: "edit", status: "stale" },
    ]);
    expect((await store.read("ops")).map((m) => [m.id, m.parts])).toEqual([
      ["o1", [{ type: "text", text: "fixed" }]],
    ]);
  });

  it("logs and counts what edits and deletions did, never their text", async () => {
    const lines: [string, Record<string, unknown>][] = [];
    const log = (message: string, attributes: Record<string, unknown>) =>
      void lines.push([message, attributes]);
    const logger = { info: log, warn: log, error: log } as never;
    const counted: Record<string, number> = {};
    let published = 0;
    const memory = new MemoryStore();
    const handler = createIngestHandler((inputs) => ingest(memory, inputs), logger, 100, {
      add: (name, value) => {
        counted[name] = (counted[name] ?? 0) + value;
      },
      refused: () => {},
      publish: () => void published++,
    });
    await handler({ messages: [{ id: "1", ts: T, channel: "c", text: "secret one" }] });
    await handler({
      messages: [
        { op: "edit", id: "1", channel: "c", text: "secret two", editedAt: T + 1 },
        { op: "edit", id: "1", channel: "c", text: "secret two", editedAt: T + 1 },
        { op: "edit", id: "1", channel: "c", text: "secret zero", editedAt: T },
        { op: "edit", id: "9", channel: "c", text: "secret nine", editedAt: T },
        { op: "delete", id: "1", channel: "c" },
        { op: "delete", id: "8", channel: "c" },
        { id: "8", ts: T, channel: "c", text: "secret eight" },
      ],
    });
    expect(counted).toEqual({
      EditsApplied: 1,
      EditsUnchanged: 1,
      EditsStale: 1,
      EditsMissing: 1,
      DeletionsApplied: 1,
      DeletionsMissing: 1,
      DeletedMessagesRefused: 1,
    });
    expect(published).toBe(2);
    const ingested = lines.filter(([message]) => message === "ingested").at(-1)?.[1];
    expect(ingested).toMatchObject({
      received: 7,
      deleted: 1,
      edits: { applied: 1, unchanged: 1, stale: 1, missing: 1 },
      deletions: { applied: 1, unchanged: 0, stale: 0, missing: 1 },
    });
    expect(lines.map(([message]) => message)).toEqual(
      expect.arrayContaining([
        "edit of a message not stored; held for CHANGE_HOLD_HOURS, applied if the message arrives meanwhile",
        "deletion of a message not stored; held for CHANGE_HOLD_HOURS, the message is refused if it arrives meanwhile",
      ]),
    );
    expect(JSON.stringify(lines)).not.toContain("secret");
  });

  it("holds each queue's lines to its producer's grant, by the queue they came through", async () => {
    const slackQueue = "arn:aws:sqs:us-east-1:000000000000:slack";
    const botQueue = "arn:aws:sqs:us-east-1:000000000000:ingest";
    const grants = new Map<string, ProducerGrant>([
      [slackQueue, { name: "slack", channels: { platform: "slack" }, changes: true }],
      [botQueue, { name: "queue", channels: { prefixes: ["team-"] }, changes: false }],
    ]);
    const lines: [string, Record<string, unknown>][] = [];
    const log = (message: string, attributes: Record<string, unknown>) =>
      void lines.push([message, attributes]);
    const refused: [string, string, number][] = [];
    const memory = new MemoryStore();
    const handler = createIngestHandler(
      (inputs, grant) => ingest(memory, inputs, { grant }),
      { info: log, warn: log, error: log } as never,
      100,
      { add: () => {}, refused: (...count) => void refused.push(count), publish: () => {} },
      grants,
    );
    const from = (queue: string, id: string, line: object, receives = "1"): SQSRecord => ({
      ...record(id, JSON.stringify(line)),
      eventSourceARN: queue,
      attributes: { ApproximateReceiveCount: receives } as SQSRecord["attributes"],
    });
    await handler({
      Records: [from(slackQueue, "s0", { id: "1", ts: T, channel: "C0SLACK", text: "theirs" })],
    } as SQSEvent);
    const response = await handler({
      Records: [
        from(botQueue, "b1", { id: "2", ts: T, channel: "team-a", text: "ours" }),
        from(botQueue, "b2", { id: "3", ts: T, channel: "C0SLACK", text: "secret injected" }),
        from(botQueue, "b3", {
          op: "edit",
          id: "1",
          channel: "C0SLACK",
          text: "secret rewritten",
          editedAt: T + 1,
        }),
        from(botQueue, "b4", { op: "delete", id: "2", channel: "team-a" }, "2"),
        from(slackQueue, "s1", { id: "4", ts: T, channel: "team-a", text: "secret stray" }),
        from("arn:aws:sqs:us-east-1:000000000000:other", "o1", { id: "5", ts: T, text: "x" }),
      ],
    } as SQSEvent);
    expect(response).toEqual({
      batchItemFailures: ["b2", "b3", "b4", "s1", "o1"].map((itemIdentifier) => ({
        itemIdentifier,
      })),
    });
    expect((await memory.read("C0SLACK")).map((m) => m.parts[0])).toEqual([
      { type: "text", text: "theirs" },
    ]);
    expect((await memory.read("team-a")).map((m) => m.id)).toEqual(["2"]);
    expect(await memory.read("default")).toEqual([]);
    // Counted by producer on the first receive only: b4 is a retry.
    expect(refused).toEqual([
      ["queue", "channel", 2],
      ["slack", "channel", 1],
    ]);
    expect(lines.filter(([m]) => m.startsWith("lines refused")).map(([, a]) => a)).toEqual([
      { producer: "queue", outsideChannels: 2, changesWithoutRight: 1 },
      { producer: "slack", outsideChannels: 1, changesWithoutRight: 0 },
    ]);
    expect(lines.map(([m]) => m)).toContain(
      "records from a queue no producer grant names; left for its dead-letter queue",
    );
    expect(JSON.stringify(lines)).not.toContain("secret");
  });

  it("reads PRODUCERS at cold start, naming what is wrong", async () => {
    await expect(loadHandler({ ...awsEnvironment(), PRODUCERS: "{}" })).rejects.toThrow(
      "ingest: environment variable PRODUCERS: expected a JSON list of producer grants",
    );
    const handler = await loadHandler({
      ...awsEnvironment(),
      PRODUCERS: JSON.stringify([
        {
          queue: "arn:aws:sqs:us-east-1:0:q",
          name: "bot",
          channels: { ids: ["g1"] },
          changes: false,
        },
      ]),
    });
    const response = await handler({
      Records: [
        {
          ...record("r1", JSON.stringify({ id: "g-9", ts: T, channel: "g2", text: "hi" })),
          eventSourceARN: "arn:aws:sqs:us-east-1:0:q",
        },
      ],
    } as SQSEvent);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "r1" }] });
  });

  it.each([
    [{ foo: 1 }, /expected \{"messages": \[\.\.\.\]\}/],
    [null, /expected \{"messages": \[\.\.\.\]\}/],
    [{ Records: [null] }, /Records\[0\] is not an SQS record/],
    [{ Records: [record("a", "{}"), { messageId: 5 }] }, /Records\[1\] is not an SQS record/],
    [
      { Records: [], messages: [{ id: "x", ts: T }] },
      /Records \(SQS\) or messages \(direct\), not both/,
    ],
  ])("rejects the malformed event %j, saying what is wrong", async (event, message) => {
    const handler = await loadHandler(awsEnvironment());
    await expect(handler(event as never)).rejects.toThrow(TypeError);
    await expect(handler(event as never)).rejects.toThrow(message);
  });
});
