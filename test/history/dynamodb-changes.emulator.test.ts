/**
 * Edits and deletions on DynamoDB Local: the shared `Editor` conformance, and what only a real
 * table shows: the conditional update under a lost answer, concurrent edits in any order, a
 * deletion's redaction of the item itself (a scan finds neither its text nor its author), held
 * changes as items (no position, the hold's end for TTL) and their races with the message's put.
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
  async (hold) => new DynamoDbStore({ client: shared.client, tableName, ...hold }),
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

  it("holds a change as an item without position that expires at the hold's end, which clear removes", async () => {
    const now = Date.UTC(2025, 5, 1, 12, 0, 0, 500);
    const store = new DynamoDbStore({
      client: shared.client,
      tableName,
      changeHoldHours: 3,
      now: () => now,
    });
    const c = conversation();
    await store.change(c, { kind: "delete", id: "m1" });
    await store.change(c, { kind: "edit", id: "m2", text: "held words", editedAt: 7 });
    const scan = async () => {
      const { Items = [] } = await documentClient(shared.client).send(
        new ScanCommand({ TableName: tableName }),
      );
      return Items.filter((i) => i.conversation === c);
    };
    const end = Math.ceil((now + 3 * 3_600_000) / 1000);
    expect(await scan()).toEqual([
      { conversation: c, key: "m#m1", v: 1, id: "m1", deleted: true, expiresAt: end },
      {
        conversation: c,
        key: "m#m2",
        v: 1,
        id: "m2",
        parts: [{ type: "text", text: "held words" }],
        editedAt: 7,
        expiresAt: end,
      },
    ]);
    await store.clear(c);
    expect(await scan()).toEqual([]);
  });

  it("resolves a change and its message's put racing the same whichever wins", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName });
    const other = new DynamoDbStore({ client: shared.client, tableName });
    const message = textMessage("user", "typo", { id: "m1", ts: 5 });
    const edit = { kind: "edit" as const, id: "m1", text: "fixed", editedAt: 10 };
    const deletion = { kind: "delete" as const, id: "m1" };
    /** Runs `meanwhile` before the first put that `run` sends, then the put. */
    const racing = async <R>(meanwhile: () => Promise<unknown>, run: () => Promise<R>) => {
      let raced = false;
      intercept(async (command, send) => {
        if (command === "PutItemCommand" && !raced) {
          raced = true;
          await meanwhile();
        }
        return send();
      });
      try {
        return await run();
      } finally {
        intercept((_command, send) => send());
      }
    };
    // The message is stored between the change's update and its hold: the change applies to it.
    for (const change of [edit, deletion]) {
      const c = conversation();
      const result = await racing(
        () => other.write(c, [message]),
        () => store.change(c, change),
      );
      expect(result).toEqual({ status: "applied", ts: 5, wasDeleted: false });
      const [stored] = await store.getMessages(c, ["m1"]);
      expect(change.kind === "edit" ? messageText(stored) : stored.deleted).toBe(
        change.kind === "edit" ? "fixed" : true,
      );
    }
    // The change is held before the message's put: the put finds it and obeys it.
    for (const change of [edit, deletion]) {
      const c = conversation();
      await store.write(c, [textMessage("user", "listed", { id: "m0", ts: 1 })]);
      const outcome = await racing(
        () => other.change(c, change),
        () => store.write(c, [message]),
      );
      const [stored] = await store.getMessages(c, ["m1"]);
      if (change.kind === "edit") {
        expect(outcome.existing).toBeUndefined();
        expect(`${messageText(stored)} ${stored.editedAt}`).toBe("fixed 10");
      } else {
        expect(outcome.existing?.map((e) => e.stored.deleted)).toEqual([true]);
        expect(stored).toBeUndefined();
      }
    }
  });

  it("reports a put that applied a held edit stored when its answer was lost", async () => {
    const { client, intercept } = instrumentedClient();
    const store = new DynamoDbStore({ client, tableName, sleep: async () => {} });
    const c = conversation();
    await store.write(c, [textMessage("user", "listed", { id: "m0", ts: 1 })]);
    await store.change(c, { kind: "edit", id: "m1", text: "fixed", editedAt: 10 });
    let puts = 0;
    intercept(async (command, send) => {
      const lost = command === "PutItemCommand" && ++puts === 2;
      const result = await send();
      // The first put finds the held edit; the second, with it applied, is stored unanswered.
      if (lost) throw failure("TimeoutError");
      return result;
    });
    const outcome = await store.write(c, [textMessage("user", "typo", { id: "m1", ts: 5 })]);
    expect(outcome).toEqual({ accepted: 1, uncertain: false });
    expect(puts).toBe(3);
    intercept((_command, send) => send());
    expect(messageText((await store.getMessages(c, ["m1"]))[0])).toBe("fixed");
  });

  it("never replaces a stored message whose retention ran out before TTL removed it", async () => {
    let now = Date.UTC(2025, 5, 1);
    const store = new DynamoDbStore({
      client: shared.client,
      tableName,
      retentionDays: 1,
      now: () => now,
    });
    const c = conversation();
    await store.write(c, [textMessage("user", "first", { id: "m1", ts: now })]);
    now += 3 * 86_400_000;
    const again = await store.write(c, [textMessage("user", "second", { id: "m1", ts: now })]);
    expect(again.existing?.map((e) => messageText(e.stored))).toEqual(["first"]);
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
