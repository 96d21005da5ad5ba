/**
 * The deployed sink: lines sent to the ingest queue (ten to a `SendMessageBatch`), which the
 * ingestion function checks and stores. The poller is a producer like any other: it can only
 * add messages or send edits and deletions, never overwrite one. A line SQS did not take is a
 * failure, so the cursor stays before it and the next run sends it again (ids deduplicate).
 */
import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  type ChatChangeInput,
  type ChatMessageInput,
  emptyIngestResult,
  type IngestResult,
} from "../../ingest/index.js";
import type { MessageSink } from "./source.js";

const SQS_BATCH = 10;

export function queueSink(sqs: SQSClient, queueUrl: string): MessageSink {
  return {
    async ingest(lines: readonly (ChatMessageInput | ChatChangeInput)[]): Promise<IngestResult> {
      const result = emptyIngestResult();
      for (let start = 0; start < lines.length; start += SQS_BATCH) {
        const batch = lines.slice(start, start + SQS_BATCH);
        try {
          const answer = await sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: batch.map((line, i) => ({
                Id: String(start + i),
                MessageBody: JSON.stringify(line),
              })),
            }),
          );
          const failed = new Set((answer.Failed ?? []).map((entry) => Number(entry.Id)));
          batch.forEach((line, i) => {
            const index = start + i;
            if (failed.has(index)) {
              result.failed.push({ index, error: "SQS refused the line", uncertain: false });
            } else if (line.op === "edit" || line.op === "delete") {
              // Sent, not yet applied: the ingestion function answers it.
            } else result.stored.push(index);
          });
        } catch (error) {
          // The whole batch may or may not have been taken: resending is safe (ids deduplicate).
          const name = (error as Error)?.name ?? "Error";
          batch.forEach((_, i) => {
            result.failed.push({ index: start + i, error: name, uncertain: true });
          });
        }
      }
      return result;
    },
  };
}
