/**
 * Producer grants through real queues: lines sent to the SQS emulator, handed to the deployed
 * ingest handler by the local event source as Lambda's hands them (the record's source queue set
 * by the event source, not by the sender), a refused line ending in its queue's dead letters.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse } from "aws-lambda";
import { MemoryStore } from "convoseg/history";
import { ingest, type ProducerGrant } from "convoseg/ingest";
import { describe, expect, it } from "vitest";
import { createIngestHandler } from "../../functions/ingest/ingest-handler.js";
import { LocalEventSource } from "../../local/event-source.js";
import { drainQueue, testSqsClient, uniqueQueueName } from "../support/sqs.js";

const T = Date.UTC(2025, 2, 3, 8);
const sqs = testSqsClient();
const quiet = { info: () => {}, warn: () => {}, error: () => {} } as never;

async function queue(prefix: string): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: uniqueQueueName(prefix) }),
  );
  const url = QueueUrl as string;
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
  );
  return { url, arn: Attributes?.QueueArn as string };
}

describe("producer queues", () => {
  it("keep a producer of the ingest queue out of a connector's channel, whatever its lines claim", async () => {
    const [slack, slackDlq, bots, botsDlq] = await Promise.all(
      ["slack", "slack-dlq", "bots", "bots-dlq"].map(queue),
    );
    const grants = new Map<string, ProducerGrant>([
      [slack.arn, { name: "slack", channels: { platform: "slack" }, changes: true }],
      [bots.arn, { name: "queue", channels: { prefixes: ["bots-"] }, changes: false }],
    ]);
    const store = new MemoryStore();
    const refused: string[] = [];
    const handler = createIngestHandler(
      (inputs, grant) => ingest(store, inputs, { grant }),
      quiet,
      100,
      { add: () => {}, refused: (producer) => void refused.push(producer), publish: () => {} },
      grants,
    );
    const source = (q: { url: string }, dlq: { url: string }) =>
      new LocalEventSource({
        sqs,
        queueUrl: q.url,
        handler: (event) => handler(event) as Promise<SQSBatchResponse>,
        deadLetters: { queueUrl: dlq.url, maxReceiveCount: 1 },
      });
    const send = (q: { url: string }, line: object) =>
      sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: JSON.stringify(line) }));
    await send(slack, { id: "1", ts: T, channel: "C0GENERAL", user: "ana", text: "the fix is X" });
    await source(slack, slackDlq).drain();
    // A bot of the ingest queue rewrites, deletes and adds to the Slack channel, and adds to its own.
    await send(bots, { op: "edit", id: "1", channel: "C0GENERAL", text: "wrong", editedAt: T + 1 });
    await send(bots, { op: "delete", id: "1", channel: "C0GENERAL" });
    await send(bots, { id: "2", ts: T, channel: "C0GENERAL", user: "ana", text: "forged" });
    await send(bots, { id: "3", ts: T, channel: "bots-builds", text: "build 12 passed" });
    await source(bots, botsDlq).drain();
    expect((await store.read("C0GENERAL")).map((m) => [m.id, m.author, m.parts[0]])).toEqual([
      ["1", "ana", { type: "text", text: "the fix is X" }],
    ]);
    expect((await store.read("bots-builds")).map((m) => m.id)).toEqual(["3"]);
    const dead = await drainQueue(sqs, botsDlq.url);
    expect(dead.map((m) => JSON.parse(m.Body as string).id).sort()).toEqual(["1", "1", "2"]);
    expect(await drainQueue(sqs, slackDlq.url)).toEqual([]);
    expect(refused).toEqual(["queue"]);
  });
});
