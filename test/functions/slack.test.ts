/**
 * The Slack receiver's Lambda module end to end: signed Function URL requests in, the signing
 * secret from a Secrets Manager served on 127.0.0.1, claims on DynamoDB Local, lines into the
 * SQS emulator, and on through the ingestion function into the messages table.
 */
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import type { LambdaFunctionURLEvent, SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createClaimsTable, signSlackRequest } from "../../lib/connectors/index.js";
import { createMessagesTable, DynamoDbStore } from "../../lib/history/index.js";
import { createChannelsTable } from "../../lib/pipeline/schema/index.js";
import { envelope, plain, SECRET } from "../connectors/slack-fixtures.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { type SecretsServer, startSecretsServer } from "../support/secrets-manager.js";
import { drainQueue, sqsEvent, testSqsClient, uniqueQueueName } from "../support/sqs.js";

const suffix = Date.now().toString(36);
const messagesTable = `slack-${suffix}`;
const channelsTable = `slack-${suffix}-channels`;
const claimsTable = `slack-${suffix}-claims`;
const SECRET_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:slack-signing-AbCdEf";
const client = testDynamoDbClient();
const sqs = testSqsClient();
let queueUrl = "";
let secrets: SecretsServer;

beforeAll(async () => {
  await createMessagesTable(client, messagesTable);
  await createChannelsTable(client, channelsTable);
  await createClaimsTable(client, claimsTable);
  ({ QueueUrl: queueUrl = "" } = await sqs.send(
    new CreateQueueCommand({ QueueName: uniqueQueueName("slack-ingest") }),
  ));
  secrets = await startSecretsServer({ [SECRET_ARN]: SECRET });
});

afterAll(() => secrets.close());

const aws = () => ({
  // The counts are the receiver unit tests' concern: no EMF lines in the test output.
  POWERTOOLS_METRICS_DISABLED: "true",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
  AWS_ENDPOINT_URL_SQS: inject("sqsEndpoint"),
  AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
});

async function load<T>(
  module: string,
  environment: Record<string, string | undefined>,
): Promise<T> {
  vi.resetModules();
  for (const [name, value] of Object.entries({ ...aws(), ...environment })) vi.stubEnv(name, value);
  return (await import(module)).handler as T;
}

type UrlHandler = (event: LambdaFunctionURLEvent) => Promise<{ statusCode: number; body: string }>;
const slackHandler = (over: Record<string, string | undefined> = {}) =>
  load<UrlHandler>("../../functions/slack/handler.js", {
    INGEST_QUEUE_URL: queueUrl,
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
    expect(secrets.reads.get(SECRET_ARN)).toBe(1);

    const sent = await drainQueue(sqs, queueUrl);
    expect(sent).toHaveLength(2);
    const ingest = await load<(event: SQSEvent) => Promise<unknown>>(
      "../../functions/ingest/handler.js",
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
    const changes = await drainQueue(sqs, queueUrl);
    expect(changes.map((m) => JSON.parse(m.Body ?? "").op)).toEqual(["edit", "delete"]);
    const ingestAgain = await load<(event: SQSEvent) => Promise<unknown>>(
      "../../functions/ingest/handler.js",
      { MESSAGES_TABLE: messagesTable, CHANNELS_TABLE: channelsTable },
    );
    await ingestAgain(sqsEvent(changes.map((m) => m.Body ?? "")));
    expect((await store.read("CE2E")).map((m) => [m.id, m.parts])).toEqual([
      [reply.ts, [{ type: "text", text: "yes, fine" }]],
    ]);
  });
});
