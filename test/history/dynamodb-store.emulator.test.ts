import { documentClient } from "convoseg/dynamodb";
import {
  findCause,
  type Message,
  MessageTooLargeError,
  messageText,
  NOTHING_WRITTEN,
  textMessage,
  WriteError,
} from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import {
  LeaseReleaseError,
  type PositionAllocator,
  SequenceAllocator,
} from "convoseg/history/positions";
import { messageItem, storedSize } from "convoseg/history/schema";
import { beforeAll, describe, expect, it } from "vitest";
import { describeStoreConformance } from "./conformance.js";
import { instrumentedClient } from "./dynamodb-client.js";
import { describeLinkerReads } from "./linker-reads-conformance.js";

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

describeLinkerReads("DynamoDbStore", () => new DynamoDbStore({ client: shared.client, tableName }));

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

  it("reads arrivals as the index holds them, and with links their thread and replyTo from the table", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    await store.write(id, [
      textMessage("user", "root", { id: "r", ts: 1, author: "ana" }),
      textMessage("user", "reply", { id: "t", ts: 2, thread: "r", replyTo: "r", author: "bo" }),
    ]);
    const plain = [];
    for await (const arrival of store.arrivalsAfter(id, undefined)) plain.push(arrival);
    expect(plain.map(({ position: _p, ...rest }) => rest)).toEqual([
      { id: "r", ts: 1 },
      { id: "t", ts: 2 },
    ]);
    const linked = [];
    for await (const arrival of store.arrivalsAfter(id, plain[0].position, { links: true })) {
      linked.push(arrival);
    }
    // Only the asked attributes: never the text or the author.
    expect(linked).toEqual([
      { position: plain[1].position, id: "t", ts: 2, thread: "r", replyTo: "r" },
    ]);
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

  it("reads a message's facts without its text: when, by whom, what kind, whether deleted", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    await store.write(id, [
      textMessage("user", "try sudo update-grub", { id: "p", ts: 5, author: "ann" }),
      textMessage("user", "grub is the boot loader", {
        id: "b",
        ts: 6,
        author: "ubottu",
        kind: "bot",
      }),
      textMessage("user", "see the wiki", {
        id: "d",
        ts: 7,
        platform: "discord",
        guild: "900000000000000001",
        userId: "800000000000000001",
      }),
      textMessage("user", "and the FAQ", { id: "t", ts: 8, chatUsername: "ubuntu_help" }),
    ]);
    // What a link needs (platform, guild, a public group's name) is among the facts; never text.
    expect(await store.messageFacts(id, ["b", "p", "d", "t", "missing"])).toEqual([
      { id: "b", ts: 6, author: "ubottu", kind: "bot" },
      { id: "p", ts: 5, author: "ann" },
      { id: "d", ts: 7, platform: "discord", guild: "900000000000000001" },
      { id: "t", ts: 8, chatUsername: "ubuntu_help" },
    ]);
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
      existing: platformBatch(120).map((stored, index) => ({ index, stored })),
    });
    expect(await positions()).toEqual(first);
    expect(await store.read(id)).toEqual(platformBatch(120));
  });

  it("rejects what DynamoDB would refuse before any I/O, naming the message", async () => {
    const { client, requests } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName });
    const cases: [string, Message[], RegExp][] = [
      [
        conversation(),
        [textMessage("user", "fine"), textMessage("user", "x".repeat(400 * 1024), { id: "huge" })],
        /messages\[1\] takes \d+ bytes as an item with its index entry/,
      ],
      [
        conversation(),
        [textMessage("user", "x", { id: "i".repeat(1023) })],
        /messages\[0\]\.id: takes 1023 bytes/,
      ],
      ["c".repeat(1025), [textMessage("user", "x")], /conversationId: takes 1025 bytes/],
      [
        conversation(),
        [textMessage("user", "x", { id: "x\ud800" })],
        /messages\[0\]\.id: invalid UTF-16/,
      ],
    ];
    for (const [id, batch, message] of cases) {
      const before = requests();
      const error = await store.write(id, batch).catch((e) => e);
      expect(error).toBeInstanceOf(WriteError);
      expect((error as WriteError).outcome).toEqual(NOTHING_WRITTEN);
      expect((error as Error).message).toMatch(message);
      expect(requests()).toBe(before);
    }
  });

  it("stores and lists a conversation id of the longest length it takes, 1,024 bytes", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const full = `${conversation()} `.padEnd(1024, "x");
    expect(Buffer.byteLength(full)).toBe(1024);
    await store.write(full, [textMessage("user", "x", { id: "1", ts: 1 })]);
    expect(await store.read(full)).toHaveLength(1);
    expect(await store.conversations()).toContain(full);
  });

  it("stores a message up to the item limit counted with its index entry, about 400 KB", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const id = conversation();
    const withText = (text: string) => textMessage("user", text, { id: "big", ts: 1 });
    // The largest text that fits: the limit less what the rest of the item and its entry take,
    // room for an expiry included (kept whether or not the store writes one).
    const overhead = storedSize(messageItem(id, withText(""), 0n, 9_999_999_999));
    const largest = withText("y".repeat(400 * 1024 - overhead));
    await expect(store.write(id, [largest])).resolves.toEqual({ accepted: 1, uncertain: false });
    expect(messageText((await store.read(id))[0])).toHaveLength(400 * 1024 - overhead);
    const tooLarge = withText("y".repeat(400 * 1024 - overhead + 1));
    expect(
      findCause(
        await store.write(conversation(), [tooLarge]).catch((e) => e),
        MessageTooLargeError,
      ),
    ).toBeDefined();
  });

  it("reports the exact prefix when a put is refused, and a retry of the suffix stores each once", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait, concurrency: 1 });
    const id = conversation();
    const batch = platformBatch(250);
    let puts = 0;
    intercept((command, send) => {
      if (command === "PutItemCommand" && ++puts === 102) {
        throw failure("ValidationException", "injected: rejected before reaching DynamoDB");
      }
      return send();
    });
    const error = (await store.write(id, batch).catch((e) => e)) as WriteError;
    expect(error).toBeInstanceOf(WriteError);
    // The first put is the conversation's listing item.
    expect(error.outcome).toEqual({ accepted: 100, uncertain: false });
    expect(await store.read(id)).toEqual(batch.slice(0, 100));

    intercept((_command, send) => send());
    await expect(store.write(id, batch.slice(error.outcome.accepted))).resolves.toEqual({
      accepted: 150,
      uncertain: false,
    });
    expect(await store.read(id)).toEqual(batch);
  });

  it("with puts in parallel, says the suffix may be stored, and a resubmission reconciles it", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait });
    const id = conversation();
    const batch = platformBatch(60);
    let puts = 0;
    intercept(async (command, send) => {
      // The 11th message is refused after later ones are already under way.
      if (command === "PutItemCommand" && ++puts === 12) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw failure("ValidationException", "injected");
      }
      return send();
    });
    const error = (await store.write(id, batch).catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual({ accepted: 10, uncertain: true });
    intercept((_command, send) => send());
    const again = await store.write(id, batch.slice(10));
    expect(again.accepted).toBe(50);
    expect(new Set((await store.read(id)).map((m) => m.id)).size).toBe(60);
    expect(await store.read(id)).toHaveLength(60);
  });

  it("marks the suffix uncertain when a put's answer is lost, and reconciles on resubmission", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, maxAttempts: 1, concurrency: 1 });
    const id = conversation();
    const batch = platformBatch(250);
    let puts = 0;
    intercept(async (command, send) => {
      const result = await send();
      if (command === "PutItemCommand" && ++puts === 102) {
        throw failure("TimeoutError", "injected: the answer was lost after the write");
      }
      return result;
    });
    const error = (await store.write(id, batch).catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual({ accepted: 100, uncertain: true });
    // Reconcile by resubmitting everything after the confirmed prefix: the written item fails its
    // condition and counts as stored, the rest is written. Nothing is stored twice.
    intercept((_command, send) => send());
    const again = await store.write(id, batch.slice(100));
    expect(again).toMatchObject({ accepted: 150, uncertain: false });
    expect(again.existing?.map((e) => e.index)).toEqual([0]);
    expect(await store.read(id)).toEqual(batch);
  });

  it("retries a put whose answer was lost, and knows its own write by its position", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait });
    const id = conversation();
    let puts = 0;
    intercept(async (command, send) => {
      const put = command === "PutItemCommand" ? ++puts : 0;
      const result = await send();
      // The second put writes the first message (the first, the conversation's listing item).
      if (put === 2) throw failure("TimeoutError");
      return result;
    });
    const batch = [textMessage("user", "no platform id"), ...platformBatch(3)];
    // Not reported as already stored: the failed condition found this very write.
    await expect(store.write(id, batch)).resolves.toEqual({ accepted: 4, uncertain: false });
    expect(await store.read(id)).toEqual(batch);
    expect(puts).toBe(6);
  });

  it("stays uncertain once an attempt of a put was ambiguous, whatever later attempts say", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: noWait, concurrency: 1 });
    let attempts = 0;
    intercept(async (command, send) => {
      if (command !== "PutItemCommand" || ++attempts === 1) return send();
      // Attempt 1 of the message times out (it may have been written), attempt 2 is refused.
      throw attempts === 2 ? failure("TimeoutError") : failure("ValidationException");
    });
    const error = (await store
      .write(conversation(), platformBatch(2))
      .catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual({ accepted: 0, uncertain: true });
  });

  it("backs off with jitter under throttling and then succeeds", async () => {
    const { client, intercept } = instrumentedClient();
    const waits: number[] = [];
    const store = new DynamoDbStore({
      client,
      tableName,
      baseDelayMs: 100,
      concurrency: 1,
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    let throttled = 0;
    intercept((command, send) => {
      if (command === "PutItemCommand" && throttled < 3) {
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
    const store = new DynamoDbStore({
      client,
      tableName,
      maxAttempts: 3,
      concurrency: 1,
      sleep: noWait,
    });
    let attempts = 0;
    intercept((command, send) => {
      if (command === "PutItemCommand" && attempts++ > 0) throw failure("ThrottlingException");
      return send();
    });
    const error = (await store
      .write(conversation(), platformBatch(3))
      .catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual(NOTHING_WRITTEN);
    // One listing put, then three attempts of the first message; the others never start.
    expect(attempts).toBe(4);
  });

  it("writes under leases of a hundred, releasing each after its puts, and renews a lapsed one", async () => {
    const leases: { first: bigint; count: number; released: boolean; puts: number }[] = [];
    let puts = 0;
    const { client, intercept } = instrumentedClient();
    intercept((command, send) => {
      if (command === "PutItemCommand") {
        puts++;
        const open = leases.filter((l) => !l.released);
        if (open.length > 0) open[0].puts++;
      }
      return send();
    });
    const sequence = new SequenceAllocator();
    const positions: PositionAllocator = {
      async reserve(channel, count) {
        const lease = await sequence.reserve(channel, count);
        const entry = { first: lease.first, count, released: false, puts: 0 };
        leases.push(entry);
        // The third lease lapses at once: its writer may start one put, then must reserve again.
        const startBy = leases.length === 3 ? performance.now() - 1 : undefined;
        return {
          first: lease.first,
          startBy,
          release: async () => {
            entry.released = true;
          },
        };
      },
    };
    const store = new DynamoDbStore({ client, tableName, positions });
    const id = conversation();
    const batch = platformBatch(230);
    await expect(store.write(id, batch)).resolves.toEqual({ accepted: 230, uncertain: false });
    expect(await store.read(id)).toEqual(batch);
    expect(leases.every((l) => l.released)).toBe(true);
    expect(leases.map((l) => l.count)).toEqual([100, 100, 30, 29]);
    expect(leases.map((l) => l.puts)).toEqual([100, 100, 1, 29]);
    const stored = [];
    for await (const s of store.readAfter(id, undefined)) stored.push(s.position);
    const expected = leases.flatMap((l) =>
      Array.from({ length: l.puts }, (_, i) => l.first + BigInt(i)),
    );
    expect(stored).toEqual(expected);
    expect(puts).toBe(231);
  });

  it("reports stored messages whose lease could not be released", async () => {
    const positions: PositionAllocator = {
      async reserve(_channel, count) {
        const lease = await new SequenceAllocator().reserve("x", count);
        return {
          ...lease,
          release: async () => {
            throw failure("ThrottlingException", "marks throttled");
          },
        };
      },
    };
    const store = new DynamoDbStore({ client: shared.client, tableName, positions });
    const id = conversation();
    const error = (await store.write(id, platformBatch(3)).catch((e) => e)) as WriteError;
    expect(error.outcome).toEqual({ accepted: 3, uncertain: false });
    expect(findCause(error, LeaseReleaseError)?.message).toContain("marks throttled");
    expect(await store.read(id)).toEqual(platformBatch(3));
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
    documentClient(client);
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
