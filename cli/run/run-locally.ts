/**
 * A run itself: the workspace opened, the emulators started, the pipeline on them, what an
 * earlier command left unextracted extracted, the messages replayed on a simulated clock and
 * their segments extracted, the files written; what it did returned for `run` to say, and a
 * progress line on stderr meanwhile.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { formatDuration } from "convoseg/duration";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { ChatMessage } from "convoseg/messages";
import type { ConversationMode } from "convoseg/pipeline";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import { DUE_SHARDS } from "convoseg/pipeline/schema";
import { startEmulators } from "../../local/emulators.js";
import type { GivenUp } from "../../local/extraction.js";
import { LLM_FAILURE_BUDGET, type StoppedExtraction } from "../../local/llm-failures.js";
import { LocalPipeline, MetricTotals } from "../../local/pipeline.js";
import { type ConflictingMessage, type RefusedMessage, replay } from "../../local/replay.js";
import type { Workspace } from "../../local/workspace.js";
import { writeReport } from "../report/report.js";
import { llmFailureLine } from "../shared/failures.js";
import { formatCount, plural } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { Progress } from "../shared/progress.js";
import { refreshSearchIndex } from "../shared/search-index.js";
import { withWorkspace } from "../shared/workspace-option.js";
import { channelSummaries, extractionSummary, workspaceSummary } from "./run-figures.js";
import { candidatesLine, extractedResults, segmentLine, writeText } from "./run-files.js";
import type { RunOptions } from "./run-options.js";
import { finishingLine, type RunSummary, replayLine } from "./run-summary.js";

/** What a local run did: the summary it prints, and what went wrong. */
export interface RunOutcome {
  summary: RunSummary;
  refused: RefusedMessage[];
  conflicts: ConflictingMessage[];
  unchanged: number;
  gaveUp: SegmentMessageV1[];
  /** Set when the failure budget stopped extraction. */
  stopped?: StoppedExtraction;
  /** The segments given up on, by id: after how many attempts, and whether at once. */
  givenUp: ReadonlyMap<string, GivenUp>;
}

/**
 * Opens the workspace (unless the environment names DynamoDB elsewhere), starts (or finds) the
 * emulators, extracts what an earlier command on the workspace delivered and did not extract,
 * replays `messages` through the pipeline, writes the delivered segments (to `--out`) and, with
 * extraction, extracts them until each is done, given up on, or the failure budget stops
 * extraction; returns what it did. Progress goes to stderr.
 */
export async function runLocally(
  messages: ChatMessage[],
  options: RunOptions,
  io: CommandIO,
): Promise<RunOutcome> {
  const started = Date.now();
  const progress = new Progress(io.stderr);
  const opening =
    options.workspace === undefined ? "creating the tables and queues" : "opening the workspace";
  const status = { line: (): string => opening };
  // Redrawn while a long step (creating the tables, a slow model) says nothing new.
  const ticker = setInterval(() => progress.update(status.line), 250);
  ticker.unref();
  const context = { started, progress, status, io };
  // Said once, and only when one is started: a workspace's warm DynamoDB Local is not.
  const starting = () => {
    progress.finish();
    io.stderr.write(
      `${process.env.AWS_ENDPOINT_URL_SQS ? "starting DynamoDB Local" : "starting DynamoDB Local and the SQS emulator"}\n`,
    );
  };
  try {
    if (options.workspace === undefined) {
      if (!process.env.AWS_ENDPOINT_URL_DYNAMODB) starting();
      return await runOn(undefined, messages, options, context);
    }
    return await withWorkspace(
      { dir: options.workspace, create: true, fresh: options.fresh, starting },
      io,
      async (workspace) => {
        const outcome = await runOn(workspace, messages, options, context);
        progress.finish();
        await refreshSearchIndex(workspace, io);
        return outcome;
      },
    );
  } finally {
    clearInterval(ticker);
    progress.finish();
  }
}

interface RunContext {
  started: number;
  progress: Progress;
  /** The status line the ticker redraws. */
  status: { line: () => string };
  io: CommandIO;
}

/** The run on the workspace's tables, or (without one) on fresh tables of the emulators. */
async function runOn(
  workspace: Workspace | undefined,
  messages: ChatMessage[],
  options: RunOptions,
  { started, progress, status, io }: RunContext,
): Promise<RunOutcome> {
  const say = (line: string) => {
    progress.finish();
    io.stderr.write(`${line}\n`);
  };
  const emulators = await startEmulators({ dynamodb: workspace?.endpoint });
  try {
    const reads = new Map<string, number>();
    const dynamodb = emulators.dynamodb();
    if (workspace !== undefined)
      await markOrNoteSample(workspace, messages, options, dynamodb, say);
    countItemsRead(dynamodb, reads);
    const metrics = new MetricTotals();
    const pipeline = await LocalPipeline.create({
      dynamodb,
      sqs: emulators.sqs(),
      metrics,
      prefix: "run",
      tables: workspace?.tables,
      ledger: workspace?.ledger,
      workers: options.workers,
      // Each worker owns at least one shard.
      dueShards: Math.max(DUE_SHARDS, options.workers ?? 1),
      settings: {
        maxSize: options.maxSize,
        settle: options.settle,
        minItems: options.minItems,
        conversations: conversationsOf(workspace, options, say),
        grace: options.grace,
        maxArrivalsPerChannel: 5000,
        leaseMs: 60_000,
        holdTimeoutMs: 60_000,
        channelConcurrency: 4,
      },
      // Its own client: the reads counted per message are the pipeline's.
      extraction: options.extraction && {
        dynamodb: emulators.dynamodb(),
        ...options.extraction,
        maxReceiveCount: options.extraction.maxAttempts,
        failureBudget: LLM_FAILURE_BUDGET,
        onLLMFailure: (cause) => say(llmFailureLine("run", cause)),
        leaseOwner: workspace?.leaseOwner,
      },
      askLinks: options.askLinks,
    });
    const { extraction } = pipeline;
    const extracted = () => extraction?.metrics.get("SegmentsExtracted") ?? 0;
    let resumed = 0;
    if (workspace !== undefined && extraction !== undefined) {
      // The queue ended with the command that filled it; the ledger did not.
      const left = await workspace.ledger.unextracted(extraction.reader);
      if (left.length > 0) {
        status.line = () =>
          `extracting ${plural(left.length, "segment")} an earlier command delivered and did not extract (${formatCount(extracted())} done)`;
        await pipeline.resend(left);
        await pipeline.extract();
        resumed = left.length;
      }
    }
    // This replay's extractions only: those resumed before it are not of its deliveries.
    const before = extracted();
    const ours = () => extracted() - before;
    const result = await replay(pipeline, messages, {
      tickMs: options.tickMs,
      extract: extraction !== undefined,
      start: workspace?.clock ?? undefined,
      afterTick: (now) => workspace?.advanceClock(now),
      onProgress: (p) => {
        status.line = () => replayLine(p, extraction === undefined ? undefined : ours(), resumed);
        progress.update(status.line);
      },
    });
    workspace?.advanceClock(result.end);
    if (extraction) {
      status.line = () => finishingLine(result.delivered.length, ours(), resumed);
      await pipeline.finishExtraction((pending) => {
        status.line = () => `extraction: ${plural(pending, "segment")} waiting for a retry`;
        progress.update(status.line);
      });
    }
    progress.finish();
    if (options.out) {
      await writeText(options.out, result.delivered.map(segmentLine).join(""));
    }
    const gaveUp = await pipeline.deadLetters();
    let results: SegmentResult[] | undefined;
    if (extraction && options.extraction?.candidates) {
      results = await extractedResults(extraction.reader, result.delivered);
      await writeText(options.extraction.candidates, results.map(candidatesLine).join(""));
    } else if (extraction) {
      results = await extractedResults(extraction.reader, result.delivered);
    }
    let report: RunSummary["report"];
    if (options.report) {
      // Judged at the replay's end, when every conversation has settled: nothing is still open.
      await writeReport(options.report, {
        segments: result.delivered,
        candidates: results,
        messages,
        settle: options.settle,
        now: result.end,
        generatedAt: Date.now(),
        sources: [
          { label: "messages", value: options.input ?? "the generated sample" },
          {
            label: "run",
            value: `--max-size ${options.maxSize} --min-items ${options.minItems} --tick ${formatDuration(options.tickMs)}`,
          },
        ],
        sampleChannels: workspace?.sampleChannels,
      });
      const path = resolve(options.report);
      report = { path, bytes: (await stat(path)).size };
    }
    const summary: RunSummary = {
      messages: messages.length,
      channels: await channelSummaries(messages, result.delivered, extraction?.reader),
      segments: result.delivered.length,
      wallMs: Date.now() - started,
      extraction:
        extraction && options.extraction && results
          ? extractionSummary(extraction, options.extraction, results, gaveUp)
          : null,
      report,
      workspace:
        workspace === undefined ? undefined : await workspaceSummary(workspace, dynamodb, resumed),
      internals: {
        ticks: result.ticks,
        tickMs: options.tickMs,
        lateSegments: result.delivered.filter((s) => s.late).length,
        notStored: result.refused.length,
        lateMessages: metrics.get("LateMessages"),
        droppedMessages: metrics.get("DroppedMessages"),
        channelErrors: metrics.get("ChannelErrors"),
        messageItemReads: perMessage(reads.get(pipeline.config.messagesTable), messages.length),
        channelItemReads: perMessage(reads.get(pipeline.config.channelsTable), messages.length),
        ...(options.askLinks
          ? {
              links: {
                asked: metrics.get("LinksAsked"),
                advised: metrics.get("LinksAdvised"),
                failures: metrics.get("LinkAdviceFailures"),
              },
            }
          : {}),
      },
    };
    return {
      summary,
      refused: result.refused,
      conflicts: result.conflicts,
      unchanged: result.unchanged,
      gaveUp,
      stopped: extraction?.stopped,
      givenUp: extraction?.givenUp ?? new Map<string, GivenUp>(),
    };
  } finally {
    await emulators.stop();
  }
}

function perMessage(items: number | undefined, messages: number): number {
  return (items ?? 0) / Math.max(1, messages);
}

/** Counts the items DynamoDB returns to reads (Query, GetItem, BatchGetItem), per table. */
function countItemsRead(client: DynamoDBClient, reads: Map<string, number>): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const input = args.input as { TableName?: string };
      const output = (result.output ?? {}) as {
        Items?: unknown[];
        Item?: unknown;
        Responses?: Record<string, unknown[]>;
      };
      const add = (table: string | undefined, items: number) => {
        if (table !== undefined) reads.set(table, (reads.get(table) ?? 0) + items);
      };
      add(input.TableName, output.Items?.length ?? (output.Item ? 1 : 0));
      for (const [table, items] of Object.entries(output.Responses ?? {})) add(table, items.length);
      return result;
    },
    { step: "initialize", name: "countItemsRead" },
  );
}

/**
 * The generated sample's channels are marked as the sample's (listed after the user's own); the
 * user's first input on a workspace that holds only the sample is told so, and how to leave it.
 */
async function markOrNoteSample(
  workspace: Workspace,
  messages: readonly ChatMessage[],
  options: RunOptions,
  client: DynamoDBClient,
  say: (line: string) => void,
): Promise<void> {
  if (options.input === undefined) {
    workspace.markSample(messages.map((m) => m.channel));
    return;
  }
  const sample = new Set(workspace.sampleChannels);
  if (sample.size === 0) return;
  const store = new DynamoDbStore({ client, tableName: workspace.tables.messagesTable });
  const stored = await store.conversations();
  if (stored.length > 0 && stored.every((channel) => sample.has(channel))) {
    say(
      `run: this workspace holds only the generated sample (${plural(sample.size, "channel")}); your channels go in beside it and are listed before the sample's. --fresh starts from empty instead, --workspace DIR uses another folder`,
    );
  }
}

/**
 * The run's conversation mode: as given, else as the workspace was last segmented, else linked;
 * kept in the workspace for the next command. A change is said: segments made before stay.
 */
function conversationsOf(
  workspace: Workspace | undefined,
  { conversations }: RunOptions,
  say: (line: string) => void,
): ConversationMode {
  const before = workspace?.conversations ?? null;
  const mode = conversations ?? before ?? "linked";
  if (before !== null && before !== mode) {
    say(
      `conversations: ${mode} from now on (this workspace was segmented ${before}; the segments made before stay as they are, --fresh starts anew)`,
    );
  }
  workspace?.chooseConversations(mode);
  return mode;
}
