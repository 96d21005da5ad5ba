/**
 * The Telegram receiver's Lambda module end to end: Function URL requests with the webhook's
 * secret token, the token from a Secrets Manager on 127.0.0.1, claims on DynamoDB Local, lines
 * into the SQS emulator, and on through the ingestion function into the messages table.
 */
import type { LambdaFunctionURLEvent, SQSEvent } from "aws-lambda";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { describe, expect, it } from "vitest";
import { drainQueue, sqsEvent } from "../support/sqs.js";
import { webhookWorld } from "../support/webhook-world.js";

const TOKEN_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:telegram-token-AbCdEf";
const TOKEN = "e2e_Secret-token_42";
const CHAT = -1009876543210;
const world = webhookWorld("telegram", TOKEN_ARN, TOKEN);
const { client, sqs, messagesTable, channelsTable, claimsTable } = world;

type UrlHandler = (event: LambdaFunctionURLEvent) => Promise<{ statusCode: number }>;
const urlEvent = (update: unknown, token = TOKEN) =>
  ({
    version: "2.0",
    rawPath: "/",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": token },
    body: JSON.stringify(update),
    isBase64Encoded: false,
    requestContext: { http: { method: "POST" } },
  }) as unknown as LambdaFunctionURLEvent;

const message = (id: number, over: Record<string, unknown> = {}) => ({
  message_id: id,
  date: 1_736_478_630 + id,
  chat: { id: CHAT, type: "supergroup", title: "Forum", is_forum: true },
  from: { id: 7, is_bot: false, first_name: "Ada" },
  text: `message ${id}`,
  ...over,
});

describe("the Telegram receiver Lambda", () => {
  it("takes updates into the messages table through the queue and the ingest function", async () => {
    const handler = await world.load<UrlHandler>("functions/telegram/handler.js", {
      INGEST_QUEUE_URL: world.queueUrl(),
      CLAIMS_TABLE: claimsTable,
      TELEGRAM_SECRET_TOKEN_ARN: TOKEN_ARN,
    });
    const topic = { is_topic_message: true, message_thread_id: 3 };
    const statuses = [
      await handler(urlEvent({ update_id: 10, message: message(4, topic) })),
      await handler(
        urlEvent({
          update_id: 11,
          message: message(5, { ...topic, reply_to_message: message(4) }),
        }),
      ),
      // Telegram's re-send of an update it got no 2xx for: acknowledged, not sent again.
      await handler(urlEvent({ update_id: 11, message: message(5) })),
      await handler(urlEvent({ update_id: 12, message: message(6) }, "guess")),
      await handler(
        urlEvent({
          update_id: 13,
          edited_message: message(4, { text: "fixed", edit_date: 1_736_478_700 }),
        }),
      ),
    ].map((r) => r.statusCode);
    expect(statuses).toEqual([200, 200, 200, 401, 200]);

    const sent = await drainQueue(sqs, world.queueUrl());
    expect(sent.map((m) => JSON.parse(m.Body ?? "").op ?? "add")).toEqual(["add", "add", "edit"]);
    const ingest = await world.load<(event: SQSEvent) => Promise<unknown>>(
      "functions/ingest/handler.js",
      { MESSAGES_TABLE: messagesTable, CHANNELS_TABLE: channelsTable },
    );
    // The adds first, as delivered: an edit before its message would be held (docs/ingestion.md).
    expect(await ingest(sqsEvent(sent.slice(0, 2).map((m) => m.Body ?? "")))).toEqual({
      batchItemFailures: [],
    });
    await ingest(sqsEvent([sent[2].Body ?? ""]));
    const stored = await new DynamoDbStore({ client, tableName: messagesTable }).read(String(CHAT));
    expect(
      stored.map((m) => ({ id: m.id, text: m.parts, thread: m.thread, replyTo: m.replyTo })),
    ).toEqual([
      {
        id: `${CHAT}:4`,
        text: [{ type: "text", text: "fixed" }],
        thread: `${CHAT}:3`,
        replyTo: undefined,
      },
      {
        id: `${CHAT}:5`,
        text: [{ type: "text", text: "message 5" }],
        thread: `${CHAT}:3`,
        replyTo: `${CHAT}:4`,
      },
    ]);
  });
});
