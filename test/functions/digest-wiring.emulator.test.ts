/**
 * The scheduled digest's real wiring (functions/digest/wiring.ts) on DynamoDB Local: the period's
 * results, topics and questions read from the results table, its activity from the messages
 * table, rendered as the bucket receives them.
 */

import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { wiring } from "../../functions/digest/wiring.js";
import { createMessagesTestTable, createResultsTestTable } from "../knowledge/fixtures.js";
import { DAY, question, result, SINCE, support, UNTIL } from "../outlets/digest/fixtures.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

describe("the digest function's wiring", () => {
  it("builds the period's digest from the stack's tables and renders all three forms", async () => {
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = await createMessagesTestTable(client);
    const results = new DynamoDbResultStore({ client, tableName: resultsTable });
    const messages = new DynamoDbStore({ client, tableName: messagesTable });
    const talks = [
      { id: "old", ts: SINCE - 3 * DAY, topic: "grub bootloader" },
      { id: "again", ts: SINCE + DAY, topic: "GRUB bootloaders" },
      { id: "fresh", ts: SINCE + 2 * DAY, topic: "wifi driver" },
    ];
    for (const talk of talks) {
      await messages.write(
        "help",
        [0, 1].map((i) =>
          textMessage("user", "<!channel> text", {
            id: `${talk.id}-m${i}`,
            ts: talk.ts + i * 60_000,
            author: `p${i}`,
          }),
        ),
      );
      const lease = { owner: "t", now: 0, leaseMs: 60_000, expiresAt: 2_000_000_000 };
      await results.acquireLease("help", talk.id, lease);
      const asked = talk.id === "fresh" ? [question("q1", talk.ts, "unanswered", "why?")] : [];
      await results.saveResult(
        result("help", talk.id, talk.ts, talk.ts + 60_000, asked),
        [support("help", talk.id, talk.topic, talk.ts)],
        undefined,
        "t",
      );
    }

    await messages.change("help", { kind: "delete", id: "again-m1" });
    // What it asks of the messages table, as IAM would see it.
    const reads: { command: string; input: Record<string, unknown> }[] = [];
    const watched = testDynamoDbClient();
    watched.middlewareStack.add(
      (next, context) => async (args) => {
        reads.push({ command: String(context.commandName), input: args.input as never });
        return next(args);
      },
      { step: "initialize" },
    );
    const build = wiring.build(watched, { resultsTable, messagesTable, channelsTable: "unused" });
    const digest = await build({ channels: ["help"], since: SINCE, until: UNTIL, now: UNTIL });

    // The messages table is read by key, naming only when, by whom, what kind, whether deleted,
    // and the platform, thread, guild and public group name (for the entries' links): the
    // digest's role may read nothing else of it (never the text; issue 39 §3).
    const ofMessages = reads.filter(({ input }) =>
      JSON.stringify(input).includes(`"${messagesTable}"`),
    );
    expect(new Set(ofMessages.map((r) => r.command))).toEqual(new Set(["BatchGetItemCommand"]));
    for (const { input } of ofMessages) {
      const request = (input.RequestItems as Record<string, Record<string, unknown>>)[
        messagesTable
      ];
      const named = Object.values(request.ExpressionAttributeNames as Record<string, string>);
      expect(named.sort()).toEqual([
        "author",
        "chatUsername",
        "deleted",
        "guild",
        "id",
        "kind",
        "platform",
        "thread",
        "ts",
      ]);
    }

    expect(digest.topics.map((t) => [t.kind, t.segments, t.earlierSegments])).toEqual([
      ["new", 1, 0],
      ["recurring", 1, 1],
    ]);
    expect(digest.topics[0].topic).toBe("wifi driver");
    expect([digest.topics[1].topic, ...digest.topics[1].aliases].sort()).toEqual([
      "GRUB bootloaders",
      "grub bootloader",
    ]);
    expect(digest.unanswered.map((q) => q.question)).toEqual(["why?"]);
    expect(digest.activity).toEqual([
      expect.objectContaining({ channel: "help", messages: 3, conversations: 2, activePeople: 2 }),
    ]);
    expect(digest.generatedAt).toBe(new Date(UNTIL).toISOString());
    const markdown = wiring.render.markdown(digest);
    expect(markdown).toContain("wifi driver");
    expect(JSON.parse(wiring.render.json(digest))).toEqual(digest);
    expect(wiring.render.html(digest)).toMatch(/^<!doctype html>/i);
  });

  it("links a Slack channel's entries to their messages, from the platform and thread stored", async () => {
    const client = testDynamoDbClient();
    const resultsTable = await createResultsTestTable(client);
    const messagesTable = await createMessagesTestTable(client);
    const results = new DynamoDbResultStore({ client, tableName: resultsTable });
    const messages = new DynamoDbStore({ client, tableName: messagesTable });
    const [root, reply] = ["1736100000.000100", "1736100000.000200"];
    await messages.write("C0HELP", [
      textMessage("user", "why?", { id: root, ts: SINCE + DAY, platform: "slack" }),
      textMessage("user", "and?", {
        id: reply,
        ts: SINCE + DAY + 1,
        platform: "slack",
        thread: root,
      }),
    ]);
    const lease = { owner: "t", now: 0, leaseMs: 60_000, expiresAt: 2_000_000_000 };
    await results.acquireLease("C0HELP", "s1", lease);
    const asked = (id: string, askedId: string, askedTs: number) => ({
      id,
      question: `${id}?`,
      status: "unanswered" as const,
      askedId,
      askedTs,
      answerIds: [],
    });
    await results.saveResult(
      result("C0HELP", "s1", SINCE + DAY, SINCE + DAY + 1, [
        asked("q1", root, SINCE + DAY),
        asked("q2", reply, SINCE + DAY + 1),
      ]),
      [],
      undefined,
      "t",
    );

    const build = wiring.build(client, { resultsTable, messagesTable, channelsTable: "unused" });
    const digest = await build({ channels: ["C0HELP"], since: SINCE, until: UNTIL, now: UNTIL });

    expect(digest.unanswered.map((q) => q.permalink)).toEqual([
      "https://slack.com/archives/C0HELP/p1736100000000100",
      `https://slack.com/archives/C0HELP/p1736100000000200?thread_ts=${root}&cid=C0HELP`,
    ]);
  });
});
