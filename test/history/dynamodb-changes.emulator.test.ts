/**
 * Edits and deletions on DynamoDB Local: the shared `Editor` conformance, and what only a real
 * table shows: the conditional update under a lost answer, concurrent edits in any order, and a
 * deletion's redaction of the item itself (a scan finds neither its text nor its author).
 */
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { messageText, textMessage } from "convoseg/history";
import { ChangeError } from "convoseg/history/changes";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { authorKeyOf, userIdKeyOf } from "convoseg/history/schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { describeAuthorConformance } from "./author-conformance.js";
import { describeChangeConformance } from "./change-conformance.js";
import { instrumentedClient } from "./dynamodb-client.js";

let tableName: string;
let shared: ReturnType<typeof instrumentedClient>;

beforeAll(async () => {
  shared = instrumentedClient();
  tableName = `changes-${Date.now().toString(36)}`;
  await createMessagesTable(shared.client, tableName);
});

describeChangeConformance(
  "DynamoDbStore",
  async () => new DynamoDbStore({ client: shared.client, tableName }),
);

describeAuthorConformance(
  "DynamoDbStore",
  async () => new DynamoDbStore({ client: shared.client, tableName }),
);

let count = 0;
const conversation = () => `changes ${++count} ${Date.now().toString(36)}`;
const failure = (name: string) => Object.assign(new Error(`injected ${name}`), { name });

describe("DynamoDbStore edits and deletions", () => {
  it("keys a written message by a hash of its user id or author, never the id or name", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const c = conversation();
    await store.write(c, [
      textMessage("user", "hi", { id: "m1", ts: 1, author: "Ana Lima" }),
      textMessage("user", "hey", { id: "m2", ts: 2, author: "Ana Lima", userId: "U1" }),
    ]);
    const { Items = [] } = await documentClient(shared.client).send(
      new ScanCommand({ TableName: tableName }),
    );
    const item = Items.find((i) => i.conversation === c && i.key === "m#m1");
    expect(item?.authorKey).toBe(authorKeyOf("Ana Lima"));
    expect(item?.authorKey).toMatch(/^[0-9a-f]{32}$/);
    // With a platform user id, by the id: a display name is neither stable nor unique.
    const withId = Items.find((i) => i.conversation === c && i.key === "m#m2");
    expect(withId?.authorKey).toBe(userIdKeyOf("U1"));
    expect(userIdKeyOf("U1")).not.toBe(authorKeyOf("U1"));
  });

  it("redacts a deleted item: a scan of the table finds neither its text nor its author", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    const c = conversation();
    await store.write(c, [
      textMessage("user", "my secret words", {
        id: "m1",
        ts: 1000,
        author: "secret-author",
        metadata: { note: "secret note" },
      }),
    ]);
    await store.change(c, { kind: "edit", id: "m1", text: "my edited secret", editedAt: 2000 });
    await store.change(c, { kind: "delete", id: "m1" });
    const { Items = [] } = await documentClient(shared.client).send(
      new ScanCommand({ TableName: tableName }),
    );
    const item = Items.find((i) => i.conversation === c && i.key === "m#m1");
    expect(item).toMatchObject({ id: "m1", ts: 1000, deleted: true, editedAt: 2000 });
    expect(item?.position).toMatch(/^\d{20}$/);
    // The author's key went with the author: the item left the byAuthor index.
    expect(item?.authorKey).toBeUndefined();
    expect(JSON.stringify(Items)).not.toMatch(/secret/);
  });

  it("reports an edit applied when its first answer was lost and the retry finds it in place", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: async () => {} });
    const c = conversation();
    await store.write(c, [textMessage("user", "v0", { id: "m1", ts: 5 })]);
    let updates = 0;
    intercept(async (command, send) => {
      const first = command === "UpdateItemCommand" && ++updates === 1;
      const result = await send();
      if (first) throw failure("TimeoutError");
      return result;
    });
    const edit = { kind: "edit" as const, id: "m1", text: "v1", editedAt: 10 };
    expect(await store.change(c, edit)).toEqual({ status: "applied", ts: 5, wasDeleted: false });
    expect(updates).toBe(2);
    intercept((_command, send) => send());
    expect((await store.change(c, edit)).status).toBe("unchanged");
  });

  it("fails a change it cannot confirm as uncertain, and a replay then completes it", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, maxAttempts: 1 });
    const c = conversation();
    await store.write(c, [textMessage("user", "v0", { id: "m1", ts: 5 })]);
    intercept(async (command, send) => {
      const result = await send();
      if (command === "UpdateItemCommand") throw failure("TimeoutError");
      return result;
    });
    const deletion = { kind: "delete" as const, id: "m1" };
    const error = await store.change(c, deletion, { track: true }).catch((e) => e);
    expect(error).toBeInstanceOf(ChangeError);
    expect(error.uncertain).toBe(true);
    intercept((_command, send) => send());
    // The mark left by the tracked change says its follow-up is still owed.
    expect((await store.change(c, deletion, { track: true })).status).toBe("applied");
  });

  it("keeps the newest edit whatever order concurrent edits arrive in", async () => {
    const store = new DynamoDbStore({ client: shared.client, tableName });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 6 }),
        async (times) => {
          const c = conversation();
          await store.write(c, [textMessage("user", "v0", { id: "m1", ts: 0 })]);
          const results = await Promise.all(
            times.map((t) =>
              store.change(c, { kind: "edit", id: "m1", text: `v${t}`, editedAt: t }),
            ),
          );
          const newest = Math.max(...times);
          const [stored] = await store.getMessages(c, ["m1"]);
          expect(`${messageText(stored)} ${stored.editedAt}`).toBe(`v${newest} ${newest}`);
          expect(results.every((r) => r.status === "applied" || r.status === "stale")).toBe(true);
        },
      ),
      { numRuns: 10 },
    );
  });
});
