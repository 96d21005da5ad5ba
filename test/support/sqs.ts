import { randomBytes } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent, SQSRecord } from "aws-lambda";
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

export { drainQueue } from "../../local/sqs.js";

/**
 * An SQS event as Lambda's event source delivers it: one record per body, each in its own
 * message group, received once, from the queue `queueArn` names.
 */
export function sqsEvent(
  bodies: readonly string[],
  options: {
    queueArn?: string;
    messageAttributes?: SQSRecord["messageAttributes"];
  } = {},
): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `record-${i}`,
      receiptHandle: `handle-${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: "1",
        SentTimestamp: "0",
        SenderId: "tick",
        ApproximateFirstReceiveTimestamp: "0",
        MessageGroupId: `group-${i}`,
        MessageDeduplicationId: `dedup-${i}`,
      },
      messageAttributes: options.messageAttributes ?? {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: options.queueArn ?? "arn:aws:sqs:us-east-1:000000000000:segments.fifo",
      awsRegion: "us-east-1",
    })),
  };
}
