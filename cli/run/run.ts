import { open, stat, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { formatDuration, parseDuration } from "convoseg/duration";
import type { Route } from "convoseg/extraction";
import { compareIds } from "convoseg/identity";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import {
  ANALYZER_DEFAULTS,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  EXTRACTORS,
  type ExtractFunctionConfig,
  ROUTES,
} from "convoseg/knowledge/write";
import type { ChatMessage } from "convoseg/messages";
import { MAX_WORKERS } from "convoseg/pipeline";
import type { CandidatesLine, SegmentMessageV1 } from "convoseg/pipeline/contract";
import { DUE_SHARDS } from "convoseg/pipeline/schema";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import { startEmulators } from "../../local/emulators.js";
import type { LocalExtraction } from "../../local/extraction.js";
import { LLM_FAILURE_BUDGET, type StoppedExtraction } from "../../local/llm-failures.js";
import type { LocalModel } from "../../local/model.js";
import { LocalPipeline, MetricTotals } from "../../local/pipeline.js";
import { type ConflictingMessage, type RefusedMessage, replay } from "../../local/replay.js";
import { sampleChat } from "../../local/sample.js";
import type { Workspace } from "../../local/workspace.js";
import { readQuestions } from "../questions.js";
import { writeReport } from "../report/report.js";
import { type Command, type CommandLine, command, EXIT } from "../shared/command.js";
import { type LoadedInput, loadInput, timezoneOption } from "../shared/export-input.js";
import { describeFailure, llmFailureLine } from "../shared/failures.js";
import {
  escapeControls,
  formatCount,
  isoMinute,
  plural,
  warnIfMinItemsUnreachable,
} from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { parseModelFlags } from "../shared/model-options.js";
import { Progress } from "../shared/progress.js";
import { channelOption } from "../shared/read-messages.js";
import {
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "../shared/workspace-option.js";
import {
  type ChannelSummary,
  type ExtractionSummary,
  formatRunSummary,
  type RunSummary,
  runEnding,
  SUMMARY_CHANNELS,
  SUMMARY_TOPICS,
  type WorkspaceSummary,
} from "./run-summary.js";

/** The most turns of a sliding window: the extract function's WINDOW_SIZE bound. */
const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;

const RUN_USAGE = `Usage: npm start -- run [options]

Runs the whole pipeline on this machine: starts DynamoDB Local on the local workspace (.convoseg
in the current directory, or --workspace DIR; unless AWS_ENDPOINT_URL_DYNAMODB points elsewhere)
and an SQS emulator (unless AWS_ENDPOINT_URL_SQS does), ingests the messages in
timestamp order through the ingestion path on a simulated clock, ticks the scheduled segmenter,
and extracts each delivered segment's topics through the extraction consumer (retrying failed
segments until each is extracted or given up on). Progress goes to standard error; at the end
it prints what was learned (each channel's top topics, how many conversations support each and
when), the counts and the time, and the commands to try next.

The workspace keeps what the run stored: topics, channel, report and reextract read it without
table flags, and a second run appends to the same channels (only new segments are extracted).
Segments an earlier command delivered and did not extract (it was killed, the model was down)
are extracted first.

Options:
${WORKSPACE_HELP}
  --fresh           empty the workspace first
  --input FILE      a chat export (Slack ZIP or folder, DiscordChatExporter, Telegram,
                    Mattermost, WhatsApp: see import-chat) or chat messages as JSON lines
                    (the segment command's format); default: a generated multi-channel sample
  --channel NAME    the channel of input lines that name none (default: default)
  --timezone ZONE   the IANA zone of an export's times that carry none (default: this machine's)
  --out FILE        also write every delivered segment to FILE, one JSON line each (default:
                    not written)
  --report FILE     write an HTML report of the topics and segments at the end (see
                    npm start -- report --help)
  --verbose         also print the run's internals: ticks, DynamoDB item reads, late and
                    dropped messages, retries
  --tick D          simulated time between ticks (default 5m)
  --settle D        silence that ends a conversation (default 24h)
  --max-size N      ceiling on one segment, in messages (default 500)
  --min-items N     drop segments with fewer messages (default 1)
  --grace D         extra quiet time before a conversation counts as settled (default 0)
  --workers N       fan each tick out to N workers, one per share of the due index, as a
                    deployment with that many does (default 1; at most ${MAX_WORKERS})
  --skip-invalid    report input lines ingestion would refuse (malformed, or more than
                    DynamoDB takes) and go on without them; without it they stop the run

Extraction:
  --extractor E     offline (default: keyphrases, no LLM; openai when --llm-endpoint or
                    --model is given), openai, bedrock, or none (stop at segments)
  --llm-endpoint U  the OpenAI-compatible base URL (e.g. http://127.0.0.1:8080/v1; API key from
                    OPENAI_API_KEY), or a Bedrock endpoint override
  --model ID        the model (default: gpt-4o-mini for openai, amazon.nova-lite-v1:0 for bedrock)
  --route R         sliding (default), prefix, non_prefix, full or full2
  --window-size N   turns per sliding window, at most ${MAX_WINDOW_TURNS} (default 60)
  --overlap N       turns shared by consecutive sliding windows (default 6)
  --max-output-tokens N
                    the output-token limit of every model call, ${EXTRACT_BOUNDS.outputTokens.min} to ${EXTRACT_BOUNDS.outputTokens.max}
                    (default ${EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS}, as deployed); not with the offline extractor
  --candidates FILE write one JSON line per extracted segment: its candidates and usage
  --max-attempts N  deliveries of a segment before it is given up (default 6)
  -h, --help        this help

A model endpoint that fails is named with the cause at its first failure (refused connection,
401, 404, timeout, …); after ${LLM_FAILURE_BUDGET} failures in a row with the same cause, extraction stops and
the run says how many segments were left unextracted.

Exit status: 0 when every valid message was stored (or was stored already, as sent) and every
segment extracted (lines skipped with --skip-invalid are counted at the end and do not fail the
run); 1 when input lines were refused (without --skip-invalid), a message could not be stored
(with --skip-invalid too; its id taken by a stored message with other content, each named), a
segment was given up on or left unextracted, or the input cannot be read; 2 for usage errors.`;

const RUN_OPTIONS = {
  ...WORKSPACE_OPTION,
  fresh: { type: "boolean" },
  input: { type: "string" },
  channel: { type: "string" },
  timezone: { type: "string" },
  out: { type: "string" },
  report: { type: "string" },
  verbose: { type: "boolean" },
  tick: { type: "string" },
  settle: { type: "string" },
  "max-size": { type: "string" },
  "min-items": { type: "string" },
  grace: { type: "string" },
  workers: { type: "string" },
  "skip-invalid": { type: "boolean" },
  extractor: { type: "string" },
  "llm-endpoint": { type: "string" },
  model: { type: "string" },
  route: { type: "string" },
  "window-size": { type: "string" },
  overlap: { type: "string" },
  "max-output-tokens": { type: "string" },
  candidates: { type: "string" },
  "max-attempts": { type: "string" },
} as const;

const RUN_EXTRACTORS = ["none", ...EXTRACTORS] as const;

export interface RunOptions {
  /** The workspace directory (none: fresh tables where AWS_ENDPOINT_URL_DYNAMODB points). */
  workspace?: string;
  /** Empty the workspace first. */
  fresh: boolean;
  input?: string;
  /** The channel of input lines that name none. */
  channel?: string;
  /** The zone of an export's zone-less times (WhatsApp, old Telegram). */
  timezone?: string;
  out?: string;
  report?: string;
  verbose: boolean;
  tickMs: number;
  settle: number;
  maxSize: number;
  minItems: number;
  grace: number;
  /** Workers each tick fans out to (default 1). */
  workers?: number;
  skipInvalid: boolean;
  extraction?: RunExtractionOptions;
}

export interface RunExtractionOptions extends LocalModel {
  analyzer: ExtractFunctionConfig["analyzer"];
  maxOutputTokens?: number;
  candidates?: string;
  maxAttempts: number;
}

/** `run`: the whole pipeline on local emulators and a simulated clock. */
export const runCommand: Command = command({
  name: "run",
  summary: ["run", "run the whole pipeline locally on emulators and a simulated clock"],
  usage: RUN_USAGE,
  options: RUN_OPTIONS,
  parse: parseRunArgs,
  run: async (options, io) => {
    warnIfMinItemsUnreachable(io, "run", options.minItems, options.maxSize);
    const unwritable = await firstUnwritable(options);
    if (unwritable !== undefined) {
      io.stderr.write(`run: ${unwritable}\n`);
      return EXIT.failed;
    }
    const loaded = await loadMessages(options, io);
    if (loaded === undefined) return EXIT.failed;
    let outcome: Awaited<ReturnType<typeof runLocally>>;
    try {
      outcome = await runLocally(loaded.messages, options, io);
    } catch (error) {
      io.stderr.write(`run: ${escapeControls(describeFailure(error))}\n`);
      return EXIT.failed;
    }
    const { summary, refused, conflicts, unchanged, gaveUp, stopped } = outcome;
    const { placeOf } = loaded;
    for (const { message, field, problem } of refused) {
      io.stderr.write(
        `${escapeControls(`${placeOf(message)}: ${field}: ${problem}`)} (not stored)\n`,
      );
    }
    for (const { message, fields } of conflicts.slice(0, SHOWN_CONFLICTS)) {
      io.stderr.write(
        `${escapeControls(`${placeOf(message)}: id ${JSON.stringify(message.id)} of channel ${JSON.stringify(message.channel)} is stored already with another ${fields.join(" and ")}`)} (not stored: the stored message is kept)\n`,
      );
    }
    if (unchanged > 0) {
      io.stderr.write(`run: ${plural(unchanged, "message")} were stored already, as sent\n`);
    }
    for (const segment of gaveUp) {
      const after = outcome.givenUpAtOnce.has(segment.segmentId)
        ? "at its first failure, which no retry could fix (the cause is above)"
        : `after ${options.extraction?.maxAttempts} attempts`;
      io.stderr.write(
        `gave up on segment ${segment.segmentId} (channel ${escapeControls(JSON.stringify(segment.channel))}, ${segment.count} messages) ${after}\n`,
      );
    }
    io.stdout.write(formatRunSummary(summary, options.verbose));
    const left = summary.extraction === null ? 0 : summary.segments - summary.extraction.extracted;
    if (stopped !== undefined) {
      io.stderr.write(
        `run: extraction stopped after ${stopped.failures} failures in a row: ${escapeControls(stopped.cause.what)}; ${plural(left, "segment")} of ${formatCount(summary.segments)} not extracted: ${escapeControls(stopped.cause.hint)}, then run the same command again.\n`,
      );
    } else if (left > 0) {
      io.stderr.write(`run: ${plural(left, "segment")} were not extracted (see above)\n`);
    }
    if (conflicts.length > 0) {
      // Ids are the message's identity: a second file whose ids start again would otherwise
      // vanish into the first without a word.
      io.stderr.write(
        `run: ${plural(conflicts.length, "message")} were not stored: their ids (channel and id) are taken by stored messages with other content${conflicts.length > SHOWN_CONFLICTS ? ` (the first ${SHOWN_CONFLICTS} above)` : ""}; give each message an id of its own in its channel (or another --channel), or start the workspace anew with --fresh\n`,
      );
    }
    const ending = runEnding({
      skipped: loaded.skipped,
      notStored: refused.length,
      taken: conflicts.length,
      notExtracted: left,
    });
    for (const line of ending.lines) io.stderr.write(`${line}\n`);
    return ending.code;
  },
});

/** Conflicting messages shown one by one; the rest are counted. */
const SHOWN_CONFLICTS = 5;

/**
 * The first output file that cannot be written (said as the error to print), checked before the
 * run rather than after minutes of it: each is created (or emptied) now.
 */
async function firstUnwritable(options: RunOptions): Promise<string | undefined> {
  const files: [string, string | undefined][] = [
    ["--out", options.out],
    ["--candidates", options.extraction?.candidates],
    ["--report", options.report],
  ];
  for (const [flag, file] of files) {
    if (file === undefined) continue;
    try {
      await (await open(file, "w")).close();
    } catch (error) {
      return `cannot write ${flag} ${file}: ${(error as Error).message}`;
    }
  }
  return undefined;
}

function parseRunArgs({ values, positionals }: CommandLine<typeof RUN_OPTIONS>): RunOptions {
  if (positionals.length > 0)
    throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const count = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1) {
      throw new Error(`${name} must be a positive integer (got ${JSON.stringify(text)})`);
    }
    return Number(text);
  };
  if (values.channel !== undefined && values.input === undefined) {
    throw new Error("--channel needs --input (the generated sample names its own channels)");
  }
  const tickMs = parseDuration(values.tick ?? "5m", "--tick");
  if (tickMs <= 0) throw new Error("--tick must be longer than 0");
  const workspace = workspaceDir(values.workspace, Boolean(process.env.AWS_ENDPOINT_URL_DYNAMODB));
  if (values.fresh && workspace === undefined) {
    throw new Error(
      "--fresh empties a workspace, and AWS_ENDPOINT_URL_DYNAMODB names tables elsewhere: pass --workspace DIR, or unset it",
    );
  }
  return {
    workspace,
    fresh: values.fresh ?? false,
    extraction: parseExtractionArgs(values, count),
    input: values.input,
    channel: channelOption(values.channel),
    timezone: timezoneOption(values.timezone),
    out: values.out,
    report: values.report,
    verbose: values.verbose ?? false,
    tickMs,
    settle:
      values.settle === undefined ? DEFAULT_SETTLE_MS : parseDuration(values.settle, "--settle"),
    maxSize: count("--max-size", values["max-size"], DEFAULT_MAX_SIZE),
    minItems: count("--min-items", values["min-items"], DEFAULT_MIN_ITEMS),
    grace: values.grace === undefined ? 0 : parseDuration(values.grace, "--grace"),
    workers: workers(count("--workers", values.workers, 1)),
    skipInvalid: values["skip-invalid"] ?? false,
  };
}

function workers(n: number): number {
  if (n > MAX_WORKERS) throw new Error(`--workers must be at most ${MAX_WORKERS} (got ${n})`);
  return n;
}

function parseExtractionArgs(
  values: CommandLine<typeof RUN_OPTIONS>["values"],
  count: (name: string, text: string | undefined, fallback: number) => number,
): RunExtractionOptions | undefined {
  const model = parseModelFlags<"none">(values, RUN_EXTRACTORS);
  const extractionFlags = [
    "llm-endpoint",
    "model",
    "route",
    "window-size",
    "overlap",
    "max-output-tokens",
    "candidates",
    "max-attempts",
  ] as const;
  if (model === "none") {
    const given = extractionFlags.find((flag) => values[flag] !== undefined);
    if (given) throw new Error(`--${given} needs extraction (it is off with --extractor none)`);
    return undefined;
  }
  const route = values.route ?? ANALYZER_DEFAULTS.route;
  if (!(ROUTES as readonly string[]).includes(route)) {
    throw new Error(`--route must be one of ${ROUTES.join(", ")} (got ${JSON.stringify(route)})`);
  }
  const windowSize = count("--window-size", values["window-size"], ANALYZER_DEFAULTS.windowSize);
  if (windowSize > MAX_WINDOW_TURNS) {
    throw new Error(
      `--window-size must be at most ${MAX_WINDOW_TURNS}, as the deployment's WINDOW_SIZE (got ${windowSize})`,
    );
  }
  const overlapText = values.overlap ?? String(ANALYZER_DEFAULTS.overlap);
  if (!/^\d+$/.test(overlapText) || Number(overlapText) >= windowSize) {
    throw new Error(
      `--overlap must be an integer from 0 to --window-size - 1 (${windowSize - 1}) (got ${JSON.stringify(overlapText)})`,
    );
  }
  return {
    ...model,
    analyzer: {
      route: route as Route,
      windowSize,
      overlap: Number(overlapText),
      prefixStep: ANALYZER_DEFAULTS.prefixStep,
      maxWindows: ANALYZER_DEFAULTS.maxWindows,
      maxConcurrency: ANALYZER_DEFAULTS.maxConcurrency,
    },
    maxOutputTokens: maxOutputTokensOf(values["max-output-tokens"], model.extractor),
    candidates: values.candidates,
    maxAttempts: count("--max-attempts", values["max-attempts"], 6),
  };
}

/** `--max-output-tokens`, checked as the deployment's `maxOutputTokens` is; absent when not given. */
function maxOutputTokensOf(text: string | undefined, extractor: string): number | undefined {
  if (text === undefined) return undefined;
  if (extractor === "offline") {
    throw new Error(
      "--max-output-tokens needs --extractor openai or bedrock (offline has no model)",
    );
  }
  const { min, max } = EXTRACT_BOUNDS.outputTokens;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new Error(
      `--max-output-tokens must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`,
    );
  }
  return Number(text);
}

/**
 * The input's messages (an export, or chat lines with bad lines reported like `segment`, and
 * lines ingestion would refuse: cli/shared/export-input.ts), or the generated sample.
 */
async function loadMessages(options: RunOptions, io: CommandIO): Promise<LoadedInput | undefined> {
  if (options.input === undefined) {
    return {
      messages: sampleChat({ settle: options.settle, perChannel: 150, topical: true }),
      placeOf: (message) => `message ${JSON.stringify(message.id)}`,
      skipped: 0,
    };
  }
  const { channel: defaultChannel, skipInvalid, timezone } = options;
  return loadInput("run", options.input, { defaultChannel, skipInvalid, timezone }, io);
}

/** What a local run did: the summary it prints, and what went wrong. */
export interface RunOutcome {
  summary: RunSummary;
  refused: RefusedMessage[];
  conflicts: ConflictingMessage[];
  unchanged: number;
  gaveUp: SegmentMessageV1[];
  /** Set when the failure budget stopped extraction. */
  stopped?: StoppedExtraction;
  /** The ids of the segments given up on at their first failure (a retry could not fix it). */
  givenUpAtOnce: ReadonlySet<string>;
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
  const status = {
    line: (): string =>
      options.workspace === undefined &&
      process.env.AWS_ENDPOINT_URL_DYNAMODB &&
      process.env.AWS_ENDPOINT_URL_SQS
        ? "creating the tables and queues"
        : "starting DynamoDB Local and the SQS emulator",
  };
  // Redrawn while a long step (starting the emulators, a slow model) says nothing new.
  const ticker = setInterval(() => progress.update(status.line), 250);
  ticker.unref();
  const context = { started, progress, status, io };
  try {
    if (options.workspace === undefined) return await runOn(undefined, messages, options, context);
    return await withWorkspace(
      { dir: options.workspace, create: true, fresh: options.fresh },
      io,
      (workspace) => runOn(workspace, messages, options, context),
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
    const result = await replay(pipeline, messages, {
      tickMs: options.tickMs,
      extract: extraction !== undefined,
      start: workspace?.clock ?? undefined,
      afterTick: (now) => workspace?.advanceClock(now),
      onProgress: (p) => {
        status.line = () =>
          `replay: ${isoMinute(p.now)}, ${formatCount(p.ingested)} of ${formatCount(p.total)} messages ingested, ${plural(p.delivered, "segment")} delivered${extraction ? `, ${formatCount(extracted())} extracted` : ""}`;
        progress.update(status.line);
      },
    });
    workspace?.advanceClock(result.end);
    if (extraction) {
      status.line = () => `extraction: ${formatCount(extracted())} extracted, finishing`;
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
      },
    };
    return {
      summary,
      refused: result.refused,
      conflicts: result.conflicts,
      unchanged: result.unchanged,
      gaveUp,
      stopped: extraction?.stopped,
      givenUpAtOnce: extraction?.givenUpAtOnce ?? new Set<string>(),
    };
  } finally {
    await emulators.stop();
  }
}

/** What the workspace holds after the run: every segment it was delivered, and how many have a result. */
async function workspaceSummary(
  workspace: Workspace,
  dynamodb: DynamoDBClient,
  resumed: number,
): Promise<WorkspaceSummary> {
  const reader = new KnowledgeReader({
    client: dynamodb,
    tableName: workspace.tables.resultsTable,
  });
  const entries = await workspace.ledger.entries();
  const left = await workspace.ledger.unextracted(reader);
  return {
    dir: workspace.dir,
    resumed,
    channels: new Set(entries.map((e) => e.channel)).size,
    segments: entries.length,
    extracted: entries.length - left.length,
  };
}

/** Each channel's counts, span and top topics, busiest (most segments, then name) first. */
async function channelSummaries(
  messages: readonly ChatMessage[],
  delivered: readonly SegmentMessageV1[],
  reader: KnowledgeReader | undefined,
): Promise<ChannelSummary[]> {
  const byName = new Map<string, ChannelSummary>();
  for (const { channel, ts, channelName } of messages) {
    const known = byName.get(channel);
    if (known === undefined) {
      byName.set(channel, {
        name: channel,
        ...(channelName && channelName !== channel ? { displayName: channelName } : {}),
        messages: 1,
        segments: 0,
        first: ts,
        last: ts,
        topics: [],
      });
      continue;
    }
    known.messages++;
    known.first = Math.min(known.first, ts);
    known.last = Math.max(known.last, ts);
  }
  for (const segment of delivered) {
    const known = byName.get(segment.channel);
    if (known) known.segments++;
  }
  const channels = [...byName.values()].sort(
    (a, b) => b.segments - a.segments || compareIds(a.name, b.name),
  );
  if (reader !== undefined) {
    for (const channel of channels.slice(0, SUMMARY_CHANNELS)) {
      channel.topics = await reader.topics(channel.name, { limit: SUMMARY_TOPICS });
      const asked = await readQuestions(reader, channel.name, {});
      const unanswered = asked.filter((q) => q.status === "unanswered").length;
      const unclear = asked.filter((q) => q.status === "unclear").length;
      if (asked.length > 0) channel.questions = { total: asked.length, unanswered, unclear };
    }
  }
  return channels;
}

function perMessage(items: number | undefined, messages: number): number {
  return (items ?? 0) / Math.max(1, messages);
}

/** Writes `text` to `path`. */
async function writeText(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (error) {
    throw new Error(`cannot write ${path}: ${(error as Error).message}`);
  }
}

/** The stored result of each delivered segment that has one, in delivery order. */
async function extractedResults(
  reader: KnowledgeReader,
  delivered: readonly SegmentMessageV1[],
): Promise<SegmentResult[]> {
  // One query per channel rather than a read per segment; in delivery order.
  const stored = new Map<string, SegmentResult>();
  for (const channel of new Set(delivered.map((segment) => segment.channel))) {
    for (const result of await reader.results(channel)) stored.set(result.segmentId, result);
  }
  return delivered.flatMap((segment) => {
    const result = stored.get(segment.segmentId);
    return result === undefined ? [] : [result];
  });
}

/** The `--candidates` line of a result: the contract in docs/contracts/candidates-line.md. */
function candidatesLine(result: SegmentResult): string {
  const { channel, segmentId, late, model, promptVersion } = result;
  const { calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = result.usage;
  const usage = { calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
  const candidates: CandidatesLine["candidates"] = result.candidates.map((c) => ({
    id: c.id,
    topic: c.topic,
    reason: c.reason,
    confidence: c.confidence,
    tags: c.tags,
    subjective: c.subjective,
    ...(c.wikiWorthy === undefined ? {} : { wikiWorthy: c.wikiWorthy }),
    messageIds: c.messageIds,
    ...(c.authorCount === undefined ? {} : { authorCount: c.authorCount, authors: c.authors }),
  }));
  const line: CandidatesLine = {
    channel,
    segmentId,
    late,
    model,
    promptVersion,
    candidates,
    usage,
  };
  return `${JSON.stringify(line)}\n`;
}

function extractionSummary(
  extraction: LocalExtraction,
  options: RunExtractionOptions,
  results: readonly SegmentResult[],
  gaveUp: readonly SegmentMessageV1[],
): ExtractionSummary {
  const total = (field: "calls" | "inputTokens" | "outputTokens" | "cacheReadTokens") =>
    results.reduce((sum, r) => sum + r.usage[field], 0);
  const { route, windowSize, overlap } = options.analyzer;
  return {
    offline: options.extractor === "offline",
    model: options.modelId,
    route: `${route}${route === "sliding" ? ` ${windowSize}/${overlap}` : ""}`,
    extracted: results.length,
    givenUp: gaveUp.length,
    retried: extraction.metrics.get("ExtractionFailures") ?? 0,
    calls: total("calls"),
    inputTokens: total("inputTokens"),
    cacheReadTokens: total("cacheReadTokens"),
    outputTokens: total("outputTokens"),
  };
}

/** The delivered segment as the output line: ids, flags and bounds; no message text. */
function segmentLine(segment: SegmentMessageV1): string {
  const { channel, segmentId, messageIds, late, belongsAfter, count, first, last } = segment;
  // The thread whose stream it is of (null: the channel's own), as `segment --json` says it.
  const thread = segment.thread ?? null;
  return `${JSON.stringify({ channel, thread, segmentId, messageIds, late, belongsAfter, count, first, last })}\n`;
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
