/**
 * Erasing a person on DynamoDB Local: a scan of every table afterwards finds neither their name
 * nor any text of theirs, no topic cites their messages, and everyone else's items are as they
 * were; a crash after any AWS call of the erasure, then a run again, ends there too; the
 * `EraseUser` operation stops near its deadline and resumes; and a table made before the
 * `byAuthor` index gets it, and its messages their author keys.
 */
import { randomUUID } from "node:crypto";
import { CreateTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import {
  addAuthorIndex,
  authorIndexState,
  backfillAuthorKeys,
  DynamoDbAuditStore,
  dynamoDbErasure,
  eraseUser,
  runEraseUser,
} from "convoseg/erasure";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { authorKeyOf } from "convoseg/history/schema";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { describe, expect, it } from "vitest";
import { createMessagesTestTable, createResultsTestTable } from "../../knowledge/fixtures.js";
import { NOW } from "../../knowledge/redaction.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { AUDIT_SECRET, buildWorld, HOUR } from "./world.js";

const client = testDynamoDbClient();

async function deployment(
  prefix: string,
  dynamodb: DynamoDBClient = client,
  userId?: (author: string, index: number) => string | undefined,
) {
  const messagesTable = await createMessagesTestTable(dynamodb);
  const resultsTable = await createResultsTestTable(dynamodb);
  const channelsTable = `channels-${randomUUID()}`;
  await createChannelsTable(dynamodb, channelsTable);
  const history = new DynamoDbStore({ client: dynamodb, tableName: messagesTable });
  const results = new DynamoDbResultStore({ client: dynamodb, tableName: resultsTable });
  const world = await buildWorld(history, results, { channels: 2, segments: 2, prefix, userId });
  return { messagesTable, resultsTable, channelsTable, world };
}

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient(client).send(
      new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items.sort((a, b) =>
    JSON.stringify([a.conversation ?? a.channel, a.key ?? a.item]) <
    JSON.stringify([b.conversation ?? b.channel, b.key ?? b.item])
      ? -1
      : 1,
  );
}

const erasure = (
  d: { messagesTable: string; resultsTable: string; channelsTable: string },
  dynamodb = client,
) =>
  dynamoDbErasure(
    {
      client: dynamodb,
      messagesTable: d.messagesTable,
      resultsTable: d.resultsTable,
      channelsTable: d.channelsTable,
      auditSecret: AUDIT_SECRET,
    },
    { now: () => NOW + 100 * HOUR },
  );

/** What must hold once `user` is erased from `d`, against the items scanned `before`. */
async function expectErased(
  d: Awaited<ReturnType<typeof deployment>>,
  user: string,
  before: { messages: Record<string, unknown>[]; results: Record<string, unknown>[] },
) {
  const messages = await scan(d.messagesTable);
  const results = await scan(d.resultsTable);
  const everything = JSON.stringify([messages, results]);
  // Their name is nowhere but in others' own words (which are theirs to keep).
  expect(JSON.stringify(results)).not.toMatch(new RegExp(`\\b${user}\\b`, "i"));
  expect(messages.filter((m) => m.author === user)).toEqual([]);
  const othersWords = messages.filter((m) => m.author !== undefined);
  expect(JSON.stringify(messages.filter((m) => !othersWords.includes(m)))).not.toMatch(
    new RegExp(`\\b${user}\\b`, "i"),
  );
  const theirs = [...d.world.written.values()].flat().filter((m) => m.author === user);
  for (const m of theirs) expect(everything).not.toContain(m.text);
  // No result, candidate or topic entry cites one of their messages.
  const gone = new Set(theirs.map((m) => m.id));
  for (const item of results) {
    const cited = [
      ...((item.messageIds as string[] | null | undefined) ?? []),
      ...(((item.candidates as { messageIds: string[] | null }[] | undefined) ?? []).flatMap(
        (c) => c.messageIds ?? [],
      ) as string[]),
    ];
    for (const id of cited) expect(gone.has(id), `${String(item.item)} cites ${id}`).toBe(false);
  }
  // Everyone else's messages are as they were.
  const others = (items: Record<string, unknown>[]) =>
    items.filter((i) => typeof i.author === "string" && i.author !== user);
  expect(others(messages)).toEqual(others(before.messages));
  expect(others(messages).length).toBeGreaterThan(0);
  return { messages, results };
}

describe("eraseUser on DynamoDB Local", () => {
  it("leaves no table holding their name or texts, and the others' data untouched", async () => {
    const d = await deployment("scan");
    const before = { messages: await scan(d.messagesTable), results: await scan(d.resultsTable) };
    expect(JSON.stringify(before)).toMatch(/carol/);
    const outcome = await eraseUser(erasure(d), {
      user: "carol",
      allChannels: true,
      requestedBy: "dpo",
    });
    expect(outcome).toMatchObject({ done: true, audit: { state: "finished", runs: 1 } });
    const { results } = await expectErased(d, "carol", before);
    const audits = results.filter((i) => String(i.item).startsWith("erasure#"));
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ channel: " deployment", requestedBy: "dpo" });
  });

  it("erases a Slack-like person by userId; given only the display name, leaves those messages", async () => {
    const d = await deployment("by-id", client, (author) =>
      author === "carol" ? "U3" : undefined,
    );
    const before = { messages: await scan(d.messagesTable), results: await scan(d.resultsTable) };
    expect(JSON.stringify(before.messages)).toMatch(/"U3"/);
    // The display name names no message stored with an id: nothing is erased.
    const byName = await eraseUser(erasure(d), {
      user: "carol",
      allChannels: true,
      requestedBy: "dpo",
    });
    expect(byName.counts.messages).toBe(0);
    expect(await scan(d.messagesTable)).toEqual(before.messages);
    const carol = [...d.world.written.values()].flat().filter((m) => m.author === "carol");
    const later = dynamoDbErasure(
      {
        client,
        messagesTable: d.messagesTable,
        resultsTable: d.resultsTable,
        channelsTable: d.channelsTable,
        auditSecret: AUDIT_SECRET,
      },
      { now: () => NOW + 101 * HOUR },
    );
    const byId = await eraseUser(later, { userId: "U3", requestedBy: "dpo" });
    expect(byId).toMatchObject({ done: true, counts: { messages: carol.length } });
    const { messages, results } = await expectErased(d, "carol", before);
    expect(JSON.stringify([messages, results])).not.toMatch(/U3/);
  });

  it("finishes after a crash after any AWS call, in the same end state", async () => {
    // One clean run to know the number of calls and the end state.
    const counted = countingClient();
    const clean = await deployment("crash-clean");
    const cleanBefore = {
      messages: await scan(clean.messagesTable),
      results: await scan(clean.resultsTable),
    };
    counted.calls = 0;
    await eraseUser(erasure(clean, counted.client), {
      user: "alice",
      allChannels: true,
      requestedBy: "dpo",
    });
    const total = counted.calls;
    expect(total).toBeGreaterThan(10);
    const cleanEnd = await expectErased(clean, "alice", cleanBefore);
    const tables = (d: typeof clean) => ({
      messages: cleanEnd.messages.length,
      names: [d.messagesTable, d.resultsTable],
    });
    expect(tables(clean).messages).toBeGreaterThan(0);
    // A spread of crash points over every kind of call: after the first, the last, and between.
    const points = [...new Set([1, 2, 3, 5, 8, 13, total - 1, total, Math.floor(total / 2)])];
    for (const crashAt of points.filter((n) => n >= 1 && n <= total)) {
      const crashing = countingClient(crashAt);
      const d = await deployment(`crash-${crashAt}`);
      const before = { messages: await scan(d.messagesTable), results: await scan(d.resultsTable) };
      crashing.calls = 0;
      crashing.armed = true;
      await expect(
        eraseUser(erasure(d, crashing.client), {
          user: "alice",
          allChannels: true,
          requestedBy: "dpo",
        }),
      ).rejects.toThrow(/injected crash/);
      const again = await eraseUser(erasure(d), {
        user: "alice",
        allChannels: true,
        requestedBy: "dpo",
      });
      expect(again.done).toBe(true);
      expect(again.audit?.counts.messages).toBe(
        [...d.world.written.values()].flat().filter((m) => m.author === "alice").length,
      );
      const end = await expectErased(d, "alice", before);
      // The same items as the clean run, but for the tables' own names and the audit's runs.
      const strip = (items: Record<string, unknown>[]) =>
        JSON.stringify(items)
          .replaceAll(/crash-(clean|\d+)#/g, "#")
          .replaceAll(/"runs":\d+/g, "")
          .replaceAll(
            /"(results|candidatesRemoved|questionsRemoved|topicEntries\w+|windowsDeleted|authorsRemoved)":\d+/g,
            "",
          )
          .replaceAll(/"version":\d+/g, "")
          .replaceAll(/"position":"\d+"/g, "");
      expect(strip(end.messages), `crash after call ${crashAt}`).toBe(strip(cleanEnd.messages));
      expect(strip(end.results), `crash after call ${crashAt}`).toBe(strip(cleanEnd.results));
    }
  }, 240_000);

  it("EraseUser stops near its deadline with done: false, and the next invocation finishes", async () => {
    const d = await deployment("deadline");
    let left = 10 * 60_000;
    const deps = { ...erasure(d), pageSize: 2 };
    const first = await runEraseUser(
      deps,
      { user: "bob", allChannels: true, requestedBy: "ops" },
      () => {
        left -= 4 * 60_000;
        return left;
      },
    );
    expect(first).toMatchObject({ done: false, audit: { state: "started", runs: 1 } });
    expect(JSON.stringify(first)).not.toContain("bob");
    const second = await runEraseUser(
      deps,
      { user: "bob", allChannels: true, requestedBy: "ops" },
      () => 600_000,
    );
    expect(second).toMatchObject({ done: true, audit: { state: "finished", runs: 2 } });
    await expect(runEraseUser(deps, { user: "bob" }, () => 600_000)).rejects.toMatchObject({
      code: "ERASURE_INVALID_REQUEST",
      field: "requestedBy",
    });
  });

  it("adds the byAuthor index to a table made before it, and keys the messages it holds", async () => {
    const tableName = `old-messages-${Date.now().toString(36)}`;
    await createMessagesTable(client, tableName);
    const store = new DynamoDbStore({ client, tableName });
    await store.write("#old", [
      textMessage("user", "hello", { id: "m1", ts: 1, author: "dora" }),
      textMessage("user", "bye", { id: "m2", ts: 2, author: "eve" }),
    ]);
    // The items as an older version wrote them: no author key.
    const documents = documentClient(client);
    for (const item of await scan(tableName)) {
      if (item.authorKey === undefined) continue;
      const { authorKey: _, ...older } = item;
      await documents.send(
        new (await import("@aws-sdk/lib-dynamodb")).PutCommand({
          TableName: tableName,
          Item: older,
        }),
      );
    }
    // And one with a user id as the version before keys followed ids wrote it: by its name.
    await store.write("#old", [
      textMessage("user", "hi", { id: "m3", ts: 3, author: "dora", userId: "U9" }),
    ]);
    await documents.send(
      new (await import("@aws-sdk/lib-dynamodb")).UpdateCommand({
        TableName: tableName,
        Key: { conversation: "#old", key: "m#m3" },
        UpdateExpression: "SET authorKey = :k",
        ExpressionAttributeValues: { ":k": authorKeyOf("dora") },
      }),
    );
    expect((await store.authorMessages({ userId: "U9" })).messages).toEqual([]);
    expect((await store.authorMessages("dora")).messages).toEqual([
      { conversationId: "#old", id: "m3", ts: 3 },
    ]);
    expect(await backfillAuthorKeys(client, tableName)).toBe(3);
    expect((await store.authorMessages({ userId: "U9" })).messages).toEqual([
      { conversationId: "#old", id: "m3", ts: 3 },
    ]);
    expect(await backfillAuthorKeys(client, tableName)).toBe(0);
    expect((await store.authorMessages("dora")).messages).toEqual([
      { conversationId: "#old", id: "m1", ts: 1 },
    ]);

    // A table created without the index at all.
    const bare = `bare-messages-${Date.now().toString(36)}`;
    await client.send(
      new CreateTableCommand({
        TableName: bare,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: "conversation", AttributeType: "S" },
          { AttributeName: "key", AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: "conversation", KeyType: "HASH" },
          { AttributeName: "key", KeyType: "RANGE" },
        ],
      }),
    );
    expect(await authorIndexState(client, bare)).toBe("missing");
    await addAuthorIndex(client, bare, {
      sleep: (ms) => new Promise((r) => setTimeout(r, ms / 10)),
    });
    expect(await authorIndexState(client, bare)).toBe("active");
  });

  it("keeps its audit items in the deployment partition, one write at a time", async () => {
    const resultsTable = await createResultsTestTable(client);
    const audits = new DynamoDbAuditStore({ client, tableName: resultsTable });
    const audit = {
      v: 1 as const,
      authorKey: "k",
      channels: null,
      requestedBy: "ops",
      requestedAt: "2026-01-01T00:00:00.000Z",
      state: "started" as const,
      runs: 1,
      counts: {
        messages: 0,
        results: 0,
        candidatesRemoved: 0,
        questionsRemoved: 0,
        topicEntriesUpdated: 0,
        topicEntriesDeleted: 0,
        windowsDeleted: 0,
        authorsRemoved: 0,
        termSegmentsWithdrawn: 0,
        nameTermsRemoved: 0,
      },
      batch: [],
      exhausted: false,
      version: 1,
    };
    expect(await audits.save(audit)).toBe(true);
    expect(await audits.save(audit)).toBe(false);
    expect(await audits.save({ ...audit, version: 2, state: "finished" })).toBe(true);
    expect(await audits.save({ ...audit, version: 2 })).toBe(false);
    expect(await audits.unfinished("k")).toBeUndefined();
    expect(await audits.list("k")).toEqual([{ ...audit, version: 2, state: "finished" }]);

    // An item written before questionsRemoved was counted reads it as 0 (a run resumed from it
    // adds to a number, not undefined).
    const { questionsRemoved: _, ...olderCounts } = audit.counts;
    const older = { ...audit, authorKey: "old", counts: { ...olderCounts, results: 2 } };
    expect(await audits.save(older as unknown as typeof audit)).toBe(true);
    expect(await audits.unfinished("old")).toEqual({
      ...audit,
      authorKey: "old",
      counts: { ...audit.counts, results: 2, questionsRemoved: 0 },
    });
  });
});

/**
 * A client that counts its requests and, armed, fails every request from the `crashAt`-th's
 * answer on (the request is made, the process dies before it learns the answer).
 */
function countingClient(crashAt = 0) {
  const counter = { calls: 0, armed: false, client: testDynamoDbClient() };
  counter.client.middlewareStack.add(
    (next) => async (args) => {
      if (counter.armed && crashAt > 0 && counter.calls >= crashAt) {
        throw new Error("injected crash: the process is dead");
      }
      const result = await next(args);
      counter.calls++;
      if (counter.armed && crashAt > 0 && counter.calls === crashAt) {
        throw new Error("injected crash after the call");
      }
      return result;
    },
    { step: "finalizeRequest", name: "crashAfter" },
  );
  return counter;
}
