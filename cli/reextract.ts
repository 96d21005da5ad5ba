import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { KnowledgeReader, REEXTRACT_ATTRIBUTE } from "../lib/knowledge/index.js";
import { encodeBody, fifoId, type SegmentMessageV1 } from "../lib/pipeline/contract/index.js";
import { escapeControls } from "./read-messages.js";
import type { CommandIO } from "./segment.js";

export const REEXTRACT_USAGE = `Usage: npm start -- reextract <channel> <segmentId>... --queue URL
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

/** Runs `reextract`; resolves to the process exit code. */
export async function reextractCommand(args: string[], io: CommandIO): Promise<number> {
  let parsed: ReturnType<typeof parseReextractArgs>;
  try {
    parsed = parseReextractArgs(args);
  } catch (error) {
    io.stderr.write(`reextract: ${(error as Error).message}\n\n${REEXTRACT_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${REEXTRACT_USAGE}\n`);
    return 0;
  }
  const [channel, ...segmentIds] = positionals;
  const table = values.table ?? process.env.RESULTS_TABLE;
  const messagesTable = values["messages-table"] ?? process.env.MESSAGES_TABLE;
  const problem =
    channel === undefined || segmentIds.length === 0
      ? "expected a channel and at least one segment id"
      : values.queue === undefined
        ? "no segment queue: pass --queue"
        : table === undefined
          ? "no results table: pass --table or set RESULTS_TABLE"
          : messagesTable === undefined
            ? "no messages table: pass --messages-table or set MESSAGES_TABLE"
            : undefined;
  if (problem || !channel || !values.queue || !table || !messagesTable) {
    io.stderr.write(`reextract: ${problem}\n\n${REEXTRACT_USAGE}\n`);
    return 2;
  }
  const reader = new KnowledgeReader({ client: new DynamoDBClient({}), tableName: table });
  const sqs = new SQSClient({});
  const fifo = values.queue.endsWith(".fifo");
  let failed = 0;
  for (const segmentId of segmentIds) {
    const result = await reader.result(channel, segmentId);
    if (result === undefined) {
      io.stderr.write(
        escapeControls(
          `reextract: segment ${segmentId} of ${JSON.stringify(channel)}: no stored result\n`,
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
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: values.queue,
        MessageBody: encodeBody(body),
        MessageAttributes: { [REEXTRACT_ATTRIBUTE]: { DataType: "String", StringValue: "true" } },
        ...(fifo
          ? {
              MessageGroupId: fifoId(channel),
              // A new id per request: an operator may ask twice on purpose.
              MessageDeduplicationId: fifoId(`${segmentId}:reextract:${io.now()}`),
            }
          : {}),
      }),
    );
    io.stdout.write(
      `segment ${segmentId}: re-extraction requested (message ${sent.MessageId}; its result was ${result.model} / prompt ${result.promptVersion})\n`,
    );
  }
  return failed > 0 ? 1 : 0;
}

const parseReextractArgs = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      queue: { type: "string" },
      table: { type: "string" },
      "messages-table": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
