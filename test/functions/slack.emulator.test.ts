/**
 * The Slack receiver's Lambda module end to end: signed Function URL requests in, the signing
 * secret from a Secrets Manager served on 127.0.0.1, claims on DynamoDB Local, lines into the
 * SQS emulator, and on through the ingestion function into the messages table.
 */
import type { LambdaFunctionURLEvent, SQSEvent } from "aws-lambda";
import { signSlackRequest } from "convoseg/connectors";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { describe, expect, it } from "vitest";
import { envelope, plain, SECRET } from "../intake/connectors/slack-fixtures.js";
import { drainQueue, sqsEvent } from "../support/sqs.js";
import { webhookWorld } from "../support/webhook-world.js";

const SECRET_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:slack-signing-AbCdEf";
const world = webhookWorld("slack", SECRET_ARN, SECRET);
const { client, sqs, messagesTable, channelsTable, claimsTable } = world;

type UrlHandler = (event: LambdaFunctionURLEvent) => Promise<{ statusCode: number; body: string }>;
const slackHandler = (over: Record<string, string | undefined> = {}) =>
  world.load<UrlHandler>("functions/slack/handler.js", {
    INGEST_QUEUE_URL: world.queueUrl(),
    CLAIMS_TABLE: claimsTable,
    SLACK_SIGNING_SECRET_ARN: SECRET_ARN,
    ...over,
  });

/** A Function URL event as Lambda hands one over; the body base64 when `base64`. */
function urlEvent(
  body: string,
  options: { secret?: string; base64?: boolean; headers?: Record<string, string> } = {},
) {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    version: "2.0",
    rawPath: "/",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": signSlackRequest(options.secret ?? SECRET, timestamp, body),
      ...options.headers,
    },
    body: options.base64 ? Buffer.from(body).toString("base64") : body,
    isBase64Encoded: options.base64 ?? false,
    requestContext: { http: { method: "POST" } },
  } as unknown as LambdaFunctionURLEvent;
}

describe("the Slack receiver Lambda", () => {
  it("fails at cold start, naming a missing setting", async () => {
    await expect(slackHandler({ CLAIMS_TABLE: " " })).rejects.toThrow(
      'slack: environment variable CLAIMS_TABLE must be set (got " ")',
    );
  });

  it("takes Slack's events into the messages table through the queue and the ingest function", async () => {
    const handler = await slackHandler();
    const verification = JSON.stringify({
      token: "t",
      challenge: "ch4llenge",
      type: "url_verification",
    });
    expect(await handler(urlEvent(verification))).toMatchObject({
      statusCode: 200,
      body: "ch4llenge",
    });
    const root = plain({ channel: "CE2E", text: "is <https://example.com|this> up?" });
    const reply = plain({
      channel: "CE2E",
      ts: "1736478640.000200",
      thread_ts: root.ts,
      text: "yes <@U0001>",
    });
    const edit = {
      type: "message",
      subtype: "message_changed",
      channel: "CE2E",
      ts: "1736478650.000300",
      message: { ...reply, text: "yes, fine", edited: { ts: "1736478650.000000" } },
      previous_message: reply,
    };
    const gone = {
      type: "message",
      subtype: "message_deleted",
      channel: "CE2E",
      ts: "1736478660.000400",
      deleted_ts: root.ts,
    };
    const responses = [];
    responses.push(await handler(urlEvent(envelope(root, "EvE1"))));
    responses.push(await handler(urlEvent(envelope(reply, "EvE2"), { base64: true })));
    // Slack's retry of the reply: acknowledged, not sent again.
    responses.push(
      await handler(urlEvent(envelope(reply, "EvE2"), { headers: { "x-slack-retry-num": "1" } })),
    );
    // A forged event: refused, not sent.
    responses.push(
      await handler(
        urlEvent(envelope(plain({ channel: "CE2E", ts: "1.1" }), "EvX"), { secret: "guess" }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 401]);
    // The secret is read once and cached.
    expect(world.secrets().reads.get(SECRET_ARN)).toBe(1);

    const sent = await drainQueue(sqs, world.queueUrl());
    expect(sent).toHaveLength(2);
    const ingest = await world.load<(event: SQSEvent) => Promise<unknown>>(
      "functions/ingest/handler.js",
      { MESSAGES_TABLE: messagesTable, CHANNELS_TABLE: channelsTable },
    );
    expect(await ingest(sqsEvent(sent.map((m) => m.Body ?? "")))).toEqual({
      batchItemFailures: [],
    });
    const store = new DynamoDbStore({ client, tableName: messagesTable });
    expect(
      (await store.read("CE2E")).map((m) => ({
        id: m.id,
        author: m.author,
        text: m.parts,
        thread: m.thread,
      })),
    ).toEqual([
      {
        id: root.ts,
        author: "U0001",
        text: [{ type: "text", text: "is this (https://example.com) up?" }],
        thread: undefined,
      },
      {
        id: reply.ts,
        author: "U0001",
        text: [{ type: "text", text: "yes @U0001" }],
        thread: root.ts,
      },
    ]);

    // The edit and the deletion, through the same path.
    const again = await slackHandler();
    expect((await again(urlEvent(envelope(edit, "EvE3")))).statusCode).toBe(200);
    expect((await again(urlEvent(envelope(gone, "EvE4")))).statusCode).toBe(200);
    const changes = await drainQueue(sqs, world.queueUrl());
    expect(changes.map((m) => JSON.parse(m.Body ?? "").op)).toEqual(["edit", "delete"]);
    const ingestAgain = await world.load<(event: SQSEvent) => Promise<unknown>>(
      "functions/ingest/handler.js",
      { MESSAGES_TABLE: messagesTable, CHANNELS_TABLE: channelsTable },
    );
    await ingestAgain(sqsEvent(changes.map((m) => m.Body ?? "")));
    expect((await store.read("CE2E")).map((m) => [m.id, m.parts])).toEqual([
      [reply.ts, [{ type: "text", text: "yes, fine" }]],
    ]);
  });
});
