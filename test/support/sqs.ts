import { randomBytes } from "node:crypto";
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { inject } from "vitest";

/**
 * A client for the emulator from the global setup; static credentials keep it off the env, and
 * the SDK's own retries are off so that every retry a test sees is the code's under test.
 */
export function testSqsClient(): SQSClient {
  return new SQSClient({
    endpoint: inject("sqsEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
}

/** A queue name no other test file uses. */
export function uniqueQueueName(prefix = "test"): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/**
 * Receives and deletes until the queue is empty, returning the messages in receive order. A FIFO
 * group yields its next messages only once the previous ones are deleted, which this does.
 * `AttributeNames: ["All"]` because the emulator ignores `MessageSystemAttributeNames`.
 */
export async function drainQueue(client: SQSClient, queueUrl: string): Promise<Message[]> {
  const received: Message[] = [];
  for (;;) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 30,
        AttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return received;
    received.push(...Messages);
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}
