/**
 * The workspace ledger's part of an erasure (`SegmentLedger.eraseAuthor`, DynamoDB Local): a
 * delivered body loses the text, author and user id of the person's inline messages, found by
 * user id or, for messages without one, by display name, as the history stores find them, a
 * thread's root of theirs, and a channel name that is theirs.
 */

import { textMessage } from "convoseg/history";
import { segmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";
import { SegmentLedger } from "../../local/ledger.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const client = testDynamoDbClient();

describe("SegmentLedger.eraseAuthor", () => {
  it("erases by user id, and by display name only the messages stored without one", async () => {
    const table = `ledger-erase-${Date.now().toString(36)}`;
    await SegmentLedger.create(client, table);
    const ledger = new SegmentLedger(client, table);
    // A Slack-like export: U1 is "Ann"; an older import stored Ann without the id.
    const messages = [
      textMessage("user", "slack words of ann", { id: "m1", ts: 1, author: "Ann", userId: "U1" }),
      textMessage("user", "older words of ann", { id: "m2", ts: 2, author: "Ann" }),
      textMessage("user", "bo answers", { id: "m3", ts: 3, author: "Bo", userId: "U2" }),
    ];
    const segment = {
      segmentId: "s1",
      channel: "#c",
      messages: messages.map((m) => ({ id: m.id as string, ts: m.ts as number })),
      late: false,
      belongsAfter: null,
    };
    await ledger.record([
      {
        segment,
        body: segmentBody(segment, messages, { maxBodyBytes: 256 * 1024, tableName: "m" }),
      },
    ]);
    const body = async () => (await ledger.entries())[0].segment.messages ?? [];

    expect(await ledger.eraseAuthor([{ user: "Ann" }])).toBe(1);
    expect((await body()).map((m) => m.text)).toEqual(["slack words of ann", "", "bo answers"]);
    expect(await ledger.eraseAuthor([{ userId: "U1" }])).toBe(1);
    const after = await body();
    expect(after).toEqual([
      { id: "m1", ts: 1, text: "" },
      { id: "m2", ts: 2, text: "" },
      expect.objectContaining({ id: "m3", author: "Bo", userId: "U2", text: "bo answers" }),
    ]);
    expect(JSON.stringify(await ledger.entries())).not.toMatch(/U1|Ann|of ann/);
    expect(await ledger.eraseAuthor([{ userId: "U1" }, { user: "Ann" }])).toBe(0);
  });

  it("takes a private chat's name (theirs) off the others' messages, and a thread root of theirs", async () => {
    const table = `ledger-erase-dm-${Date.now().toString(36)}`;
    await SegmentLedger.create(client, table);
    const ledger = new SegmentLedger(client, table);
    const dm = { platform: "telegram", channelName: "Alice Zorbington " };
    const root = textMessage("user", "root words of alice", {
      id: "r0",
      ts: 1,
      author: "Alice Zorbington ",
      userId: "user333",
      ...dm,
    });
    const messages = [
      textMessage("user", "ann in the thread", { id: "m1", ts: 2, author: "Ann", ...dm }),
      textMessage("user", "alice answers", {
        id: "m2",
        ts: 3,
        author: "Alice Zorbington ",
        userId: "user333",
        ...dm,
      }),
    ];
    // One segment of the chat's thread (its root as context), one of Ann alone.
    const thread = {
      segmentId: "s1",
      channel: "333",
      messages: messages.map((m) => ({ id: m.id as string, ts: m.ts as number })),
      late: false,
      belongsAfter: null,
      thread: "r0",
    };
    const alone = { ...thread, segmentId: "s2", messages: [{ id: "m3", ts: 4 }] };
    delete (alone as { thread?: string }).thread;
    const options = { maxBodyBytes: 256 * 1024, tableName: "m" };
    await ledger.record([
      { segment: thread, body: segmentBody(thread, messages, options, root) },
      {
        segment: alone,
        body: segmentBody(
          alone,
          [textMessage("user", "ann alone", { id: "m3", ts: 4, author: "Ann", ...dm })],
          options,
        ),
      },
    ]);

    expect(await ledger.eraseAuthor([{ userId: "user333" }])).toBe(2);
    const after = JSON.stringify(await ledger.entries());
    expect(after).not.toMatch(/alice|user333/i);
    expect(after).toContain("ann alone");
    expect(after).toContain("ann in the thread");
    expect(await ledger.eraseAuthor([{ userId: "user333" }])).toBe(0);
  });
});
