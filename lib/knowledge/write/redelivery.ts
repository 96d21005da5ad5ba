/**
 * How the consumer hands failed records back to SQS: their retry delays as visibility
 * timeouts, and a given-up segment moved to the dead-letter queue.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { KnowledgeError } from "../errors.js";
import { ExtractionError, InvalidModelOutputError, LLMError } from "../extraction/index.js";
import { MAX_VISIBILITY_SECONDS, type RetrySchedule } from "./retry.js";

/** Sends the record to the dead-letter queue as it came, with why it was given up on. */
export async function deadLetter(
  sqs: SQSClient,
  queueUrl: string,
  record: SQSRecord,
  error: unknown,
  attempts: number,
): Promise<void> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined) {
      attributes[name] = { DataType: value.dataType, StringValue: value.stringValue };
    }
  }
  const { name, code } = error as { name?: string; code?: unknown };
  attributes[GAVE_UP_ATTRIBUTE] = {
    DataType: "String",
    StringValue: `${attempts} attempts; last ${name ?? "Error"}${typeof code === "string" ? ` ${code}` : ""}`,
  };
  const fifo = record.eventSourceARN.endsWith(".fifo");
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: record.body,
      MessageAttributes: attributes,
      ...(fifo && {
        MessageGroupId: record.attributes.MessageGroupId,
        MessageDeduplicationId: record.attributes.MessageDeduplicationId,
      }),
    }),
  );
}

/** Set on a segment the consumer dead-lettered: its attempts and the last error's name and code. */
export const GAVE_UP_ATTRIBUTE = "convoseg-gave-up";

/**
 * Sets the visibility timeout of each failed record to its retry delay. A record skipped behind
 * an earlier failure of its FIFO group gets that failure's delay. Best effort: if it fails, SQS
 * retries after the queue's own visibility timeout.
 */
export async function backOff(
  sqs: SQSClient,
  event: SQSEvent,
  response: SQSBatchResponse,
  delays: Map<string, number>,
  retry: RetrySchedule,
  logger: { warn(message: string, attributes: Record<string, unknown>): void },
): Promise<void> {
  const failedIds = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const records = event.Records.filter((r) => failedIds.has(r.messageId));
  const groupDelays = new Map<string | undefined, number>();
  for (const record of records) {
    const delay = delays.get(record.messageId);
    const group = record.attributes.MessageGroupId;
    if (delay !== undefined && !groupDelays.has(group)) groupDelays.set(group, delay);
  }
  const byQueue = new Map<
    string,
    { Id: string; ReceiptHandle: string; VisibilityTimeout: number }[]
  >();
  records.forEach((record, i) => {
    const delay =
      delays.get(record.messageId) ??
      groupDelays.get(record.attributes.MessageGroupId) ??
      retry.baseDelaySeconds;
    const entries = byQueue.get(record.eventSourceARN) ?? [];
    entries.push({
      Id: String(i),
      ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, delay),
    });
    byQueue.set(record.eventSourceARN, entries);
  });
  for (const [arn, entries] of byQueue) {
    for (let i = 0; i < entries.length; i += 10) {
      try {
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrlOf(arn),
            Entries: entries.slice(i, i + 10),
          }),
        );
      } catch (error) {
        logger.warn("could not shorten the retry delay of failed segments", {
          queue: arn,
          error: describe(error),
        });
      }
    }
  }
}

/** The URL of the queue an event source ARN names (`arn:aws:sqs:<region>:<account>:<name>`). */
export function queueUrlOf(arn: string): string {
  const [, partition, , region, account, name] = arn.split(":");
  const domain = partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com";
  return `https://sqs.${region}.${domain}/${account}/${name}`;
}

/** An error for logs: its name, code and message (which never quote message text). */
export function describe(error: unknown): Record<string, unknown> {
  if (error instanceof LLMError) {
    const { name, code, retryable, status, kind } = error;
    return { name, code, kind, retryable, status };
  }
  if (error instanceof InvalidModelOutputError) {
    // The reason says what was wrong; the raw reply may quote the chat, so it stays out.
    return { name: error.name, code: error.code, reason: error.reason };
  }
  if (error instanceof ExtractionError || error instanceof KnowledgeError) {
    return { name: error.name, code: error.code, message: error.message };
  }
  const { name, message } = error as Error;
  return { name, message };
}
