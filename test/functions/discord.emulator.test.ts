/**
 * The deployed poller handler, loaded as Lambda loads it (configured by environment), against the
 * scripted Discord API, a scripted Secrets Manager, DynamoDB Local and the SQS emulator.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type DiscordServer, startDiscordServer } from "../../bench/discord-server.js";
import { stubLocalAws } from "../support/aws-env.js";
import { createTestTable, testDynamoDbClient } from "../support/dynamodb.js";
import { drainQueue, testSqsClient, uniqueQueueName } from "../support/sqs.js";

let discord: DiscordServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await discord?.close();
  discord = undefined;
  for (const close of closers.splice(0)) await close();
});

/** Secrets Manager's JSON protocol, answering `token` (counting the reads). */
async function secretsServer(token: () => string) {
  const reads = { count: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      reads.count++;
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(JSON.stringify({ Name: "discord", SecretString: token() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads };
}

const context = { getRemainingTimeInMillis: () => 60_000 } as Context;

describe("discord Lambda", () => {
  it("polls with the secret's token into the ingest queue; after a 401 it reads the secret again", async () => {
    let token = "good";
    const secrets = await secretsServer(() => token);
    const api = { token: "good" };
    discord = await startDiscordServer(api);
    discord.channel("111", { name: "general" });
    const posted = [discord.post("111").id, discord.post("111").id];
    const dynamodb = testDynamoDbClient();
    const sqs = testSqsClient();
    const cursors = await createTestTable(dynamodb, {
      AttributeDefinitions: [{ AttributeName: "key", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "key", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    });
    const messages = `discord-fn-${Date.now().toString(36)}`;
    await createMessagesTable(dynamodb, messages);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueQueueName("discord") }),
    );
    vi.resetModules();
    stubLocalAws();
    const environment = {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
      DISCORD_CHANNELS: "111",
      DISCORD_TOKEN_SECRET: "arn:aws:secretsmanager:us-east-1:123456789012:secret:discord-AbCdEf",
      CURSORS_TABLE: cursors,
      INGEST_QUEUE_URL: QueueUrl as string,
      MESSAGES_TABLE: messages,
      DISCORD_API_URL: discord.url,
      BACKFILL_FROM: new Date(Date.now() - 60_000).toISOString(),
      DISCORD_THREADS: "false",
      DEADLINE_MARGIN_MS: "5000",
      POWERTOOLS_METRICS_DISABLED: "true",
    };
    for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
    const { handler } = await import("../../functions/discord/handler.js");

    expect(await handler({}, context)).toMatchObject({ ingested: 2, authFailures: 0 });
    const bodies = (await drainQueue(sqs, QueueUrl as string)).map((m) =>
      JSON.parse(m.Body as string),
    );
    expect(bodies.map((b) => b.id).sort()).toEqual([...posted].sort());
    expect(bodies[0]).toMatchObject({
      channel: "111",
      channelName: "general",
      platform: "discord",
    });

    // The token is revoked: the run stops at its first 401, without another request.
    api.token = "rotated";
    const pending = discord.post("111").id;
    const before = discord.requests.length;
    expect(await handler({}, context)).toMatchObject({ unauthorized: true, authFailures: 1 });
    expect(discord.requests.length - before).toBe(1);
    // The new token pasted into the secret is read again by the next run.
    token = "rotated";
    expect(await handler({}, context)).toMatchObject({ ingested: 1, authFailures: 0 });
    expect(secrets.reads.count).toBe(2);
    const later = (await drainQueue(sqs, QueueUrl as string)).map((m) =>
      JSON.parse(m.Body as string),
    );
    expect(later.map((b) => b.id)).toEqual([pending]);
  }, 60_000);
});
