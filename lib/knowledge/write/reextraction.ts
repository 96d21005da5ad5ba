/**
 * Sending a stored segment back to the segment queue to be extracted again: what the operator's
 * `reextract` command does on request, and what a redaction does once more than
 * `reextractChangedShare` of a segment's messages changed (the {@link queueReextraction} port).
 */
import {
  SendMessageCommand,
  type SendMessageCommandInput,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import {
  encodeBody,
  fifoId,
  type SegmentMessageV1,
} from "../../segmentation/pipeline/contract/index.js";
import { KnowledgeError } from "../errors.js";
import type { SegmentResult } from "../store/schema/items.js";
import { REEXTRACT_ATTRIBUTE, REEXTRACT_REPLACING_ATTRIBUTE } from "./consumer.js";
import type { RequestReextraction } from "./redact.js";

/**
 * A stored result's segment as the queue carries it: by reference to the messages table, so
 * that the consumer reads the messages as the store holds them now (deleted ones left out, edits
 * applied). Undefined when the result lists no message ids (left out of a result too large to
 * store whole, its `trimmed.messageIds` says so): such a segment cannot be sent by reference.
 */
export function storedSegmentBody(
  result: SegmentResult,
  messagesTable: string,
): SegmentMessageV1 | undefined {
  if (result.messageIds === undefined) return undefined;
  return {
    v: 1,
    segmentId: result.segmentId,
    channel: result.channel,
    late: result.late,
    belongsAfter: result.belongsAfter,
    count: result.count,
    first: result.first,
    last: result.last,
    messageIds: result.messageIds,
    reference: { table: messagesTable },
    // The consumer reads the root as the store holds it now, as it does the messages.
    ...(result.thread === undefined ? {} : { thread: result.thread }),
  };
}

export interface ReextractionMessageOptions {
  /**
   * What makes this request one on a FIFO queue: requests with the same key within SQS's
   * five-minute deduplication window are sent once. The segment's original delivery used the
   * segment id alone, which no key here can give, so a request is never dropped as that one.
   */
  requestKey: string;
  /**
   * The `extractedAt` of the result this request replaces: the consumer re-extracts only while
   * that result is stored, so a request sent twice (a standard queue, or a retry outside the
   * deduplication window) extracts once. Absent: re-extracted whatever is stored.
   */
  replacing?: string;
}

/** The SendMessage input that asks the segment queue's consumer to extract `body` again. */
export function reextractionMessage(
  queueUrl: string,
  body: SegmentMessageV1,
  options: ReextractionMessageOptions,
): SendMessageCommandInput {
  return {
    QueueUrl: queueUrl,
    MessageBody: encodeBody(body),
    MessageAttributes: {
      [REEXTRACT_ATTRIBUTE]: { DataType: "String", StringValue: "true" },
      ...(options.replacing === undefined
        ? {}
        : {
            [REEXTRACT_REPLACING_ATTRIBUTE]: { DataType: "String", StringValue: options.replacing },
          }),
    },
    // The group is the channel's, as the tick's deliveries (fifo-id.ts): one order per channel.
    ...(queueUrl.endsWith(".fifo")
      ? {
          MessageGroupId: fifoId(body.channel),
          MessageDeduplicationId: fifoId(`${body.segmentId}:reextract:${options.requestKey}`),
        }
      : {}),
  };
}

/**
 * The redactor's `requestReextraction` port over the segment queue at `queueUrl`: sends the
 * redacted result's segment by reference to `messagesTable`. Its request key is the extraction
 * it replaces (`extractedAt`): a redaction crossing the share happens once per extraction, and a
 * retry after a crash before the pending flag was cleared sends the same request again.
 */
export function queueReextraction(
  sqs: Pick<SQSClient, "send">,
  queueUrl: string,
  messagesTable: string,
): RequestReextraction {
  return async (_channel, segmentId, result) => {
    const body = storedSegmentBody(result, messagesTable);
    if (body === undefined) {
      throw new KnowledgeError(
        "KNOWLEDGE_REEXTRACTION_UNLISTED",
        `segment ${segmentId}: its result lists no message ids, so it cannot be sent to be re-extracted by reference`,
      );
    }
    await sqs.send(
      new SendMessageCommand(
        reextractionMessage(queueUrl, body, {
          requestKey: result.extractedAt,
          replacing: result.extractedAt,
        }),
      ),
    );
  };
}
