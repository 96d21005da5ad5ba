import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import {
  type ExtractionOutcome,
  REEXTRACT_ATTRIBUTE,
  reextractionMessage,
  storedSegmentBody,
} from "convoseg/knowledge/write";
import { readSegmentMessages, type SegmentMessageV1 } from "convoseg/pipeline/contract";
import { localExtractConfig, localExtractDependencies } from "../local/extraction.js";
import { llmFailureCause } from "../local/llm-failures.js";
import type { LocalModel } from "../local/model.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure, llmFailureLine, onQueue, onTable } from "./shared/failures.js";
import { escapeControls, plural, shellArg } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { parseModelFlags } from "./shared/model-options.js";
import { refreshSearchIndex } from "./shared/search-index.js";
import {
  noteUnextracted,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./shared/workspace-option.js";

const REEXTRACT_USAGE = `Usage: npm start -- reextract <channel> <segmentId>... [--workspace DIR]
                            [--extractor E] [--llm-endpoint URL] [--model ID]
       npm start -- reextract <channel> <segmentId>... --queue URL
                            [--table NAME] [--messages-table NAME]

Operator command: extracts stored segments again, even though their results are current (after
a prompt fix, say); the new result replaces the old and records what it replaced.

On the local workspace that run writes (.convoseg in the current directory, or --workspace DIR),
the default without --queue, each segment is re-extracted in place, by this command, with the
model the flags choose (default: the offline extractor).

With --queue, it asks a deployment's extraction function: each segment is sent to the segment
queue by reference, flagged with the ${REEXTRACT_ATTRIBUTE} message attribute. The sender must be
allowed to send to the segment queue (the stack's segmentQueueSenders). The AWS SDK's usual
environment picks the account, region and endpoints.

Options:
  --workspace DIR        the local workspace (default: .convoseg in the current directory,
                         unless --queue is given)
  --extractor E          on a workspace: offline (default; openai when --llm-endpoint or --model
                         is given), openai or bedrock
  --llm-endpoint URL     on a workspace: the OpenAI-compatible base URL (key from OPENAI_API_KEY;
                         none needed on this machine), or a Bedrock endpoint override
  --model ID             on a workspace: the model (default: gpt-4o-mini for openai,
                         amazon.nova-lite-v1:0 for bedrock)
  --queue URL            the segment queue (the stack's SegmentQueueUrl)
  --table NAME           the results table (default: $RESULTS_TABLE)
  --messages-table NAME  the messages table the segments are read from (default: $MESSAGES_TABLE)
  -h, --help             this help`;

/** `reextract`: sends stored segments back to the segment queue to be extracted again. */
export const reextractCommand: Command = command({
  name: "reextract",
  usage: REEXTRACT_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    extractor: { type: "string" },
    "llm-endpoint": { type: "string" },
    model: { type: "string" },
    queue: { type: "string" },
    table: { type: "string" },
    "messages-table": { type: "string" },
  },
  parse: ({ values, positionals }): ReextractOptions => {
    const [channel, ...segmentIds] = positionals;
    if (!channel || segmentIds.length === 0) {
      throw new Error("expected a channel and at least one segment id");
    }
    const deployed = (["queue", "table", "messages-table"] as const).find(
      (flag) => values[flag] !== undefined,
    );
    const local = (["workspace", "extractor", "llm-endpoint", "model"] as const).find(
      (flag) => values[flag] !== undefined,
    );
    if (deployed && local) {
      throw new Error(
        `--${local} is for a local workspace and --${deployed} for a deployment's queue: give one`,
      );
    }
    // A table named in the environment means a deployment's too, unless --workspace says otherwise.
    const named = Boolean(process.env.RESULTS_TABLE || process.env.MESSAGES_TABLE);
    if (!deployed && (local !== undefined || !named)) {
      const workspace = workspaceDir(values.workspace, false) as string;
      return {
        local: true,
        channel,
        segmentIds,
        workspace,
        model: parseModelFlags<never>(values, MODELS),
      };
    }
    const table = values.table ?? process.env.RESULTS_TABLE;
    const messagesTable = values["messages-table"] ?? process.env.MESSAGES_TABLE;
    // An empty value is as good as none.
    if (!values.queue) throw new Error("no segment queue: pass --queue");
    if (!table) throw new Error("no results table: pass --table or set RESULTS_TABLE");
    if (!messagesTable) {
      throw new Error("no messages table: pass --messages-table or set MESSAGES_TABLE");
    }
    return { local: false, channel, segmentIds, queue: values.queue, table, messagesTable };
  },
  run: async (options, io) => {
    if (options.local) return reextractInPlace(options, io);
    const { channel, segmentIds, queue, table, messagesTable } = options;
    const dynamodb = new DynamoDBClient({});
    const reader = new KnowledgeReader({ client: dynamodb, tableName: table });
    const sqs = new SQSClient({});
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
          `${escapeControls(
            `reextract: segment ${segmentId} of ${JSON.stringify(channel)}: no stored result`,
          )}\n`,
        );
        failed++;
        continue;
      }
      const body = storedSegment(result, messagesTable, io);
      if (body === undefined) {
        failed++;
        continue;
      }
      const sent = await onQueue(segmentQueue, () =>
        sqs.send(
          new SendMessageCommand(
            // A new request per run: an operator may ask twice on purpose.
            reextractionMessage(queue, body, { requestKey: String(io.now()) }),
          ),
        ),
      );
      io.stdout.write(
        `segment ${segmentId}: re-extraction requested (message ${sent.MessageId}; its result was ${result.model} / prompt ${result.promptVersion})\n`,
      );
    }
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
});

const MODELS = ["offline", "openai", "bedrock"] as const;

type ReextractOptions =
  | {
      local: true;
      channel: string;
      segmentIds: string[];
      workspace: string;
      model: LocalModel;
    }
  | {
      local: false;
      channel: string;
      segmentIds: string[];
      queue: string;
      table: string;
      messagesTable: string;
    };

/** Re-extracts each segment on the workspace, in this process, replacing its result. */
function reextractInPlace(
  options: Extract<ReextractOptions, { local: true }>,
  io: CommandIO,
): Promise<number> {
  const { channel, segmentIds, model } = options;
  return withWorkspace({ dir: options.workspace, create: false }, io, async (workspace) => {
    await noteUnextracted("reextract", workspace, io);
    const dynamodb = workspace.dynamodb();
    const { resultsTable, messagesTable } = workspace.tables;
    const config = localExtractConfig({ resultsTable, messagesTable }, model, ANALYZER_DEFAULTS);
    const deps = localExtractDependencies(config, model, {
      dynamodb,
      leaseOwner: workspace.leaseOwner,
    });
    const reader = new KnowledgeReader({ client: dynamodb, tableName: resultsTable });
    let failed = 0;
    for (const segmentId of segmentIds) {
      const result = await reader.result(channel, segmentId);
      if (result === undefined) {
        io.stderr.write(
          `${escapeControls(
            `reextract: segment ${segmentId} of ${JSON.stringify(channel)}: no stored result in the workspace (npm start -- topics ${shellArg(channel)} names its segments)`,
          )}\n`,
        );
        failed++;
        continue;
      }
      const segment = storedSegment(result, messagesTable, io);
      if (segment === undefined) {
        failed++;
        continue;
      }
      let outcome: ExtractionOutcome;
      try {
        outcome = await deps.extractor.extract(
          segment,
          await readSegmentMessages(segment, deps.messages),
          { force: true },
        );
      } catch (error) {
        const cause = llmFailureCause(error, model);
        if (cause === undefined) throw error;
        io.stderr.write(`${llmFailureLine("reextract", cause)}\n`);
        throw new CommandFailure(
          `segment ${segmentId} was not extracted again (its result is as it was): ${cause.hint}, then run the same command again`,
        );
      }
      io.stdout.write(
        `segment ${segmentId}: re-extracted (${plural(outcome.result.candidates.length, "candidate")} with ${outcome.result.model} / prompt ${outcome.result.promptVersion}; it replaced ${result.model} / prompt ${result.promptVersion})\n`,
      );
    }
    if (failed < segmentIds.length) await refreshSearchIndex(workspace, io);
    return failed > 0 ? EXIT.failed : EXIT.ok;
  });
}

/** A stored result's segment by reference, or undefined (said on stderr) when it cannot be. */
function storedSegment(
  result: SegmentResult,
  messagesTable: string,
  io: CommandIO,
): SegmentMessageV1 | undefined {
  const body = storedSegmentBody(result, messagesTable);
  if (body === undefined) {
    // Left out of a result too large to store whole (its trimmed.messageIds says so).
    io.stderr.write(
      `${escapeControls(
        `reextract: segment ${result.segmentId} of ${JSON.stringify(result.channel)}: its result lists no message ids (left out to fit DynamoDB's item limit), so it cannot be sent by reference; send the segment again from its source instead`,
      )}\n`,
    );
  }
  return body;
}

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
