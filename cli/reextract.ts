import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { KnowledgeReader, REEXTRACT_ATTRIBUTE } from "../lib/knowledge/index.js";
import { encodeBody, fifoId, type SegmentMessageV1 } from "../lib/pipeline/contract/index.js";
import { type Command, command, EXIT } from "./command.js";
import { onQueue, onTable } from "./failures.js";
import { escapeControls } from "./format.js";

const REEXTRACT_USAGE = `Usage: npm start -- reextract <channel> <segmentId>... --queue URL
                            [--table NAME] [--messages-table NAME]

Operator command: asks the extraction function to extract stored segments again, even though
their results are current (after a prompt fix, say). Each segment is sent to the segment queue
by reference, flagged with the ${REEXTRACT_ATTRIBUTE} message attribute; the new result replaces
the old and records what it replaced. The sender must be allowed to send to the segment queue
(the stack's segmentQueueSenders). The AWS SDK's usual environment picks the account, region and
endpoints.

Options:
  --queue URL            the segment queue (the stack's SegmentQueueUrl)
  --table NAME           the results table (default: $RESULTS_TABLE)
  --messages-table NAME  the messages table the segments are read from (default: $MESSAGES_TABLE)
  -h, --help             this help`;

/** `reextract`: sends stored segments back to the segment queue to be extracted again. */
export const reextractCommand: Command = command({
  name: "reextract",
  summary: ["reextract <channel> <id>", "operator command: extract stored segments again"],
  usage: REEXTRACT_USAGE,
  options: {
    queue: { type: "string" },
    table: { type: "string" },
    "messages-table": { type: "string" },
  },
  parse: ({ values, positionals }) => {
    const [channel, ...segmentIds] = positionals;
    const table = values.table ?? process.env.RESULTS_TABLE;
    const messagesTable = values["messages-table"] ?? process.env.MESSAGES_TABLE;
    // An empty value is as good as none.
    if (!channel || segmentIds.length === 0) {
      throw new Error("expected a channel and at least one segment id");
    }
    if (!values.queue) throw new Error("no segment queue: pass --queue");
    if (!table) throw new Error("no results table: pass --table or set RESULTS_TABLE");
    if (!messagesTable) {
      throw new Error("no messages table: pass --messages-table or set MESSAGES_TABLE");
    }
    return { channel, segmentIds, queue: values.queue, table, messagesTable };
  },
  run: async ({ channel, segmentIds, queue, table, messagesTable }, io) => {
    const dynamodb = new DynamoDBClient({});
    const reader = new KnowledgeReader({ client: dynamodb, tableName: table });
    const sqs = new SQSClient({});
    const fifo = queue.endsWith(".fifo");
    let failed = 0;
    const results = {
      table,
      role: "the results table",
      fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
    };
    const segmentQueue = { queue, fix: "pass the stack's SegmentQueueUrl with --queue" };
    await onTable(
      {
        table: messagesTable,
        role: "the messages table",
        fix: "pass the stack's MessagesTableName with --messages-table (or set MESSAGES_TABLE)",
      },
      () => tableExists(dynamodb, messagesTable),
    );
    for (const segmentId of segmentIds) {
      const result = await onTable(results, () => reader.result(channel, segmentId));
      if (result === undefined) {
        io.stderr.write(
          escapeControls(
            `reextract: segment ${segmentId} of ${JSON.stringify(channel)}: no stored result\n`,
          ),
        );
        failed++;
        continue;
      }
      if (result.messageIds === undefined) {
        // Left out of a result too large to store whole (its trimmed.messageIds says so).
        io.stderr.write(
          escapeControls(
            `reextract: segment ${segmentId} of ${JSON.stringify(channel)}: its result lists no message ids (left out to fit DynamoDB's item limit), so it cannot be sent by reference; send the segment again from its source instead\n`,
          ),
        );
        failed++;
        continue;
      }
      const body: SegmentMessageV1 = {
        v: 1,
        segmentId,
        channel,
        late: result.late,
        belongsAfter: result.belongsAfter,
        count: result.count,
        first: result.first,
        last: result.last,
        messageIds: result.messageIds,
        reference: { table: messagesTable },
      };
      const sent = await onQueue(segmentQueue, () =>
        sqs.send(
          new SendMessageCommand({
            QueueUrl: queue,
            MessageBody: encodeBody(body),
            MessageAttributes: {
              [REEXTRACT_ATTRIBUTE]: { DataType: "String", StringValue: "true" },
            },
            ...(fifo
              ? {
                  MessageGroupId: fifoId(channel),
                  // A new id per request: an operator may ask twice on purpose.
                  MessageDeduplicationId: fifoId(`${segmentId}:reextract:${io.now()}`),
                }
              : {}),
          }),
        ),
      );
      io.stdout.write(
        `segment ${segmentId}: re-extraction requested (message ${sent.MessageId}; its result was ${result.model} / prompt ${result.promptVersion})\n`,
      );
    }
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
});

/**
 * Fails (with ResourceNotFoundException) when `table` does not exist: the segments sent name it,
 * and the extraction function would fail on each. A sender not allowed to describe tables is
 * not checked.
 */
async function tableExists(client: DynamoDBClient, table: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: table }));
  } catch (error) {
    if ((error as Error).name !== "AccessDeniedException") throw error;
  }
}
