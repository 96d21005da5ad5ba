/**
 * The message counter: the messages table's stream (new and old images) to each channel's count
 * of kept messages on its marks item, which the read API's channel list gives. Exactly once
 * whatever Lambda retries (`MessageCounts`). Logs counts only, never a key: keys are channel ids.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBStreamEvent } from "aws-lambda";
import { MessageCounts, messageStreamRecords } from "convoseg/ingest";

const tableName = process.env.CHANNELS_TABLE?.trim();
if (!tableName) throw new Error("count: environment variable CHANNELS_TABLE must be set");
const logger = new Logger({ serviceName: "convoseg-count" });
const counts = new MessageCounts({ client: new DynamoDBClient({}), tableName });

/**
 * A batch of stream records. A failure fails the batch, which Lambda retries (halving it on
 * repeated failure) until the records age out to the failure destination.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(event: DynamoDBStreamEvent): Promise<void> {
  const report = await counts.apply(messageStreamRecords(event.Records));
  logger.info("counted", { records: event.Records.length, ...report });
}
