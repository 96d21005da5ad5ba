import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { DynamoDbStore, MessageTooLargeError } from "../../lib/history/dynamodb/store.js";
import { createMessagesTable } from "../../lib/history/dynamodb/table.js";
import { findCause } from "../../lib/history/errors.js";
import { type Message, textMessage } from "../../lib/history/message.js";
import { NOTHING_WRITTEN, WriteError } from "../../lib/history/outcome.js";
import { ChannelStore } from "../../lib/pipeline/channel-store.js";
import { describeStoreConformance } from "./conformance.js";

type Handler = (args: unknown) => Promise<{ output: Record<string, unknown> }>;
/** Wraps each request: it may fail before `send`, after it, or change what comes back. */
type Interceptor = (command: string, send: () => ReturnType<Handler>) => ReturnType<Handler>;

/**
 * A client against the emulator that counts requests and lets a test intercept them. The SDK's
 * own retries are off so that every retry seen is the store's.
 */
function instrumentedClient() {
  const client = new DynamoDBClient({
    endpoint: inject("dynamodbEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
  let requests = 0;
  let intercept: Interceptor = (_command, send) => send();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requests++;
      return intercept(
        context.commandName as string,
        () => next(args) as unknown as ReturnType<Handler>,
      ) as never;
    },
    { step: "finalizeRequest", name: "testInterceptor" },
  );
  return {
    client,
    requests: () => requests,
    intercept: (interceptor: Interceptor) => {
      intercept = interceptor;
    },
  };
}

const failure = (name: string, message = name) => Object.assign(new Error(message), { name });
const noWait = async () => {};

let tableName: string;
let shared: ReturnType<typeof instrumentedClient>;

beforeAll(async () => {
  shared = instrumentedClient();
  tableName = `messages-${Date.now().toString(36)}`;
  await createMessagesTable(shared.client, tableName);
});

describeStoreConformance(
  "DynamoDbStore",
  () => ({
    store: new DynamoDbStore({ client: shared.client, tableName }),
    requests: shared.requests,
  }),
  { reader: true, writer: true, clearer: true, lister: true },
);

let conversationCount = 0;
const conversation = () => `dynamo ${++conversationCount} ${Date.now().toString(36)}`;
const platformBatch = (count: number, from = 0): Message[] =>
  Array.from({ length: count }, (_, i) =>
    textMessage("user", `message ${from + i}`, {
      id: `${from + i}`,
      ts: 1_700_000_000_000 + from + i,
      author: "ana",
    }),
  );

describe("DynamoDbStore", () => {
  it("reads what arrived after a position, in order, page by page", async () => {
    const { client, requests } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName });
    const id = conversation();
    await store.write(id, platformBatch(30));
    const all = [];
    for await (const stored of store.readAfter(id, undefined)) all.push(stored);
    expect(all.map((s) => s.message.id)).toEqual(platformBatch(30).map((m) => m.id));
    expect(new Set(all.map((s) => s.position)).size).toBe(30);

    const before = requests();
    const after = [];
    for await (const stored of store.readAfter(id, all[9].position, { pageSize: 7 }))
      after.push(stored);
    expect(after).toEqual(all.slice(10));
    expect(requests() - before).toBe(3);

    const window = [];
    for await (const stored of store.readAfter(id, all[9].position, { upTo: all[19].position })) {
      window.push(stored);
    }
    expect(window).toEqual(all.slice(10, 20));
  });

  it("orders by arrival, keeping the platform timestamp apart from the position", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    const late = textMessage("user", "back-dated", { id: "late", ts: 1 });
    await store.write(id, platformBatch(2));
    await store.write(id, [late]);
    const stored = [];
    for await (const s of store.readAfter(id, undefined)) stored.push(s);
    expect(stored.map((s) => s.message)).toEqual([...platformBatch(2), late]);
    expect(stored[2].position).toBeGreaterThan(stored[1].position);
  });

  it("makes re-ingesting the same messages a no-op: same items, same positions", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    await store.write(id, platformBatch(120));
    const positions = async () => {
      const list = [];
      for await (const s of store.readAfter(id, undefined)) list.push(s.position);
      return list;
    };
    const first = await positions();
    await expect(store.write(id, platformBatch(120))).resolves.toEqual({
      accepted: 120,
      uncertain: false,
    });
    expect(await positions()).toEqual(first);
    expect(await store.read(id)).toEqual(platformBatch(120));
  });

  it("rejects a message over the item size limit before any I/O, naming it", async () => {
    const { client, requests } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName });
    const huge = textMessage("user", "x".repeat(410 * 1024), { id: "huge" });
    const before = requests();
    const error = await store
      .write(conversation(), [textMessage("user", "fine"), huge])
      .catch((e) => e);
    expect(error).toBeInstanceOf(WriteError);
    expect((error as WriteError).outcome).toEqual(NOTHING_WRITTEN);
    expect(findCause(error, MessageTooLargeError)?.index).toBe(1);
    expect((error as Error).message).toMatch(/messages\[1\] takes about \d+ bytes/);
    expect(requests()).toBe(before);
  });

  it("reports the exact prefix when a transaction fails, and a retry of the suffix stores each once", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait });
    const id = conversation();
    const batch = platformBatch(250);
    let transactions = 0;
    intercept((command, send) => {
      if (command === "TransactWriteItemsCommand" && ++transactions === 2) {
        throw failure("ValidationException", "injected: rejected before reaching DynamoDB");
      }
      return send();
    });
    const error = (await store.write(id, batch).catch((e) => e)) as WriteError;
    expect(error).toBeInstanceOf(WriteError);
    expect(error.outcome).toEqual({ accepted: 100, uncertain: false });
    expect(await store.read(id)).toEqual(batch.slice(0, 100));

    intercept((_command, send) => send());
    await expect(store.write(id, batch.slice(error.outcome.accepted))).resolves.toEqual({
      accepted: 150,
      uncertain: false,
    });
    expect(await store.read(id)).toEqual(batch);
  });

  it("marks the suffix uncertain when a commit's answer is lost, and reconciles on resubmission", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, maxAttempts: 1 });
    const id = conversation();
    const batch = platformBatch(250);
    let transactions = 0;
    intercept(async (command, send) => {
      const result = await send();
      if (command === "TransactWriteItemsCommand" && ++transactions === 2) {
        throw failure("TimeoutError", "injected: the answer was lost after the commit");
      }
      return result;
    });
    const error = (await store.write(id, batch).catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual({ accepted: 100, uncertain: true });
    // Reconcile by resubmitting everything after the confirmed prefix: committed items fail their
    // condition and count as stored, the rest is written. Nothing is stored twice.
    intercept((_command, send) => send());
    await expect(store.write(id, batch.slice(100))).resolves.toEqual({
      accepted: 150,
      uncertain: false,
    });
    expect(await store.read(id)).toEqual(batch);
  });

  it("retries a transaction whose commit answer was lost, without storing twice", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait });
    const id = conversation();
    let lost = false;
    intercept(async (command, send) => {
      const result = await send();
      if (command === "TransactWriteItemsCommand" && !lost) {
        lost = true;
        throw failure("TimeoutError");
      }
      return result;
    });
    const batch = [textMessage("user", "no platform id"), ...platformBatch(3)];
    await expect(store.write(id, batch)).resolves.toEqual({ accepted: 4, uncertain: false });
    expect(await store.read(id)).toEqual(batch);
  });

  it("backs off with jitter under throttling and then succeeds", async () => {
    const { client, intercept } = instrumentedClient();
    const waits: number[] = [];
    const store = new DynamoDbStore({
      client,
      tableName,
      baseDelayMs: 100,
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    let throttled = 0;
    intercept((command, send) => {
      if (command === "TransactWriteItemsCommand" && throttled < 3) {
        throttled++;
        throw failure("ProvisionedThroughputExceededException");
      }
      return send();
    });
    const id = conversation();
    await expect(store.write(id, platformBatch(5))).resolves.toEqual({
      accepted: 5,
      uncertain: false,
    });
    expect(waits).toEqual([50, 100, 200]);
    expect(await store.read(id)).toEqual(platformBatch(5));
  });

  it("gives up after its attempts, reporting nothing written and nothing uncertain", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, maxAttempts: 3, sleep: noWait });
    let attempts = 0;
    intercept((command, send) => {
      if (command === "TransactWriteItemsCommand") {
        attempts++;
        throw failure("ThrottlingException");
      }
      return send();
    });
    const error = (await store
      .write(conversation(), platformBatch(3))
      .catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual(NOTHING_WRITTEN);
    expect(attempts).toBe(3);
  });

  it("retries deletes that DynamoDB left unprocessed when clearing", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait });
    const id = conversation();
    await store.write(id, platformBatch(10));
    let batches = 0;
    intercept(async (command, send) => {
      const result = await send();
      // The first batch comes back claiming three deletes were left unprocessed.
      if (command === "BatchWriteItemCommand" && ++batches === 1) {
        const keys = ["m#0", "m#1", "m#2"].map((key) => ({ conversation: id, key }));
        result.output.UnprocessedItems = {
          [tableName]: keys.map((Key) => ({ DeleteRequest: { Key } })),
        };
      }
      return result;
    });
    await store.clear(id);
    expect(batches).toBeGreaterThan(1);
    expect(await store.read(id)).toEqual([]);
    expect(await store.conversations()).not.toContain(id);
  });

  it("gets messages by platform id in the order asked, over several batches", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    await store.write(id, platformBatch(150));
    const wanted = ["149", "3", "missing", ...Array.from({ length: 120 }, (_, i) => `${i + 10}`)];
    const messages = await store.getMessages(id, wanted);
    expect(messages.map((m) => m.id)).toEqual(wanted.filter((w) => w !== "missing"));
    expect(messages[0]).toEqual(platformBatch(150)[149]);
  });

  it("stores messages with undefined optional fields, whatever else shares the client", async () => {
    const { client } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName });
    // Another document client on the same SDK client must not change how messages are written.
    new ChannelStore({ client, tableName: "unused" });
    const id = conversation();
    const message = {
      role: "user" as const,
      parts: [{ type: "text" as const, text: "x", metadata: undefined }],
      author: undefined,
    };
    await store.write(id, [message]);
    expect(await store.read(id)).toEqual([textMessage("user", "x")]);
  });
});
