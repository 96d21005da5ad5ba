import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import { KnowledgeReader, type Topic } from "convoseg/knowledge/read";
import { createResultsTable } from "convoseg/knowledge/store";
import { conversationSegment } from "convoseg/knowledge/write";
import {
  DEFAULT_SEGMENTATION_POLICY,
  type DecodedTranscript,
  decodeTranscript,
  importedTurns,
  inFileBytes,
  type SegmentationOutcome,
  type SegmentFormat,
  segmentTranscript,
  type TranscriptEncoding,
  transcriptId,
  transcriptMessages,
} from "convoseg/transcript";
import { type Emulators, startEmulators } from "../../local/emulators.js";
import { localExtractConfig, localExtractDependencies } from "../../local/extraction.js";
import { llmFailureCause } from "../../local/llm-failures.js";
import type { LocalModel } from "../../local/model.js";
import type { Workspace } from "../../local/workspace.js";
import { type Command, type CommandLine, command, EXIT } from "../shared/command.js";
import {
  CommandFailure,
  describeFailure,
  llmFailureLine,
  onTable,
  tableProblem,
} from "../shared/failures.js";
import { columns, escapeControls, formatCount, formatTopics, plural } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { parseModelFlags } from "../shared/model-options.js";
import { WORKSPACE_OPTION, withWorkspace, workspaceDir } from "../shared/workspace-option.js";
import {
  type InputReport,
  inputReport,
  nothingToImport,
  parseEncoding,
  readBytes,
  readFailure,
  segmentationFailure,
  warningLines,
} from "./import-input.js";

const IMPORT_USAGE = `Usage: npm start -- import <file|-> --conversation ID [options]

Segments an agent transcript (plain text with role markers, or JSONL exports) and stores its
turns as the messages of conversation ID in the history store: in the local workspace
(.convoseg in the current directory, or --workspace DIR; its conversations table, and with
--extract its results table, where topics ID reads them), unless --table names a deployed
table or AWS_ENDPOINT_URL_DYNAMODB an emulator of one's own (fresh tables there). Each
turn's id comes from the transcript's content hash and the turn index, so importing the same
file twice stores nothing new. The file must be UTF-8 text (a leading byte order mark is
skipped); binary data and other encodings are refused. A file that looks like JSONL but is read
as plain text, a byte order mark and bare CR line ends are reported as warnings.

Options:
  --conversation ID        the conversation to store the turns under (required)
  --format F               auto (default), plain or jsonl (forced: every bad line is listed)
  --encoding ENC           decode the file from ENC: utf-8, utf-16le, utf-16be, latin1 or
                           windows-1252 (default: UTF-8 only, anything else refused)
  --min-segment-bytes N    segments smaller than this merge into a neighbour (default 256)
  --dry-run                print the segmentation report and write nothing
  --json                   the report (or the import's outcome) as one JSON object
  --workspace DIR          the local workspace to store into (default: .convoseg in the current
                           directory, unless a table is named)
  --table NAME             the history table (default: the workspace's conversations table)
  --extract                then extract the conversation's topics (route prefix, windows every
                           5 user turns) into the results table and print them
  --results-table NAME     the results table (default: the workspace's; with --table, a fresh
                           one beside it)
  --extractor E            offline (default; openai when --llm-endpoint or --model is given),
                           openai or bedrock
  --llm-endpoint URL       the OpenAI-compatible base URL (key from OPENAI_API_KEY; none needed on
                           this machine), or a Bedrock endpoint override
  --model ID               the model (default: gpt-4o-mini for openai, amazon.nova-lite-v1:0 for
                           bedrock)
  -h, --help               this help

Exit status: 0 when imported (warnings included); 1 when the transcript cannot be read, is not
text (binary data, or not UTF-8 without --encoding), holds only whitespace, cannot be segmented
(the error names the line or the cap) or stored; 2 for usage errors.`;

const IMPORT_EXTRACTORS = ["offline", "openai", "bedrock"] as const;

interface ImportOptions {
  source: string;
  conversation: string;
  format: SegmentFormat;
  encoding?: TranscriptEncoding;
  minSegmentBytes: number;
  dryRun: boolean;
  json: boolean;
  /** The workspace to store into (none: --table, or fresh tables on AWS_ENDPOINT_URL_DYNAMODB). */
  workspace?: string;
  table?: string;
  extract?: LocalModel & { resultsTable?: string };
}

const IMPORT_OPTIONS = {
  ...WORKSPACE_OPTION,
  conversation: { type: "string" },
  format: { type: "string" },
  encoding: { type: "string" },
  "min-segment-bytes": { type: "string" },
  "dry-run": { type: "boolean" },
  json: { type: "boolean" },
  table: { type: "string" },
  extract: { type: "boolean" },
  "results-table": { type: "string" },
  extractor: { type: "string" },
  "llm-endpoint": { type: "string" },
  model: { type: "string" },
} as const;

/** `import`: an agent transcript's turns stored as a conversation, and with `--extract` extracted. */
export const importCommand: Command = command({
  name: "import",
  usage: IMPORT_USAGE,
  options: IMPORT_OPTIONS,
  parse: parseImportArgs,
  run: async (options, io) => {
    let decoded: DecodedTranscript;
    try {
      decoded = decodeTranscript(await readBytes(options.source, io), options.encoding);
    } catch (error) {
      io.stderr.write(readFailure(options.source, error, options.encoding));
      return EXIT.failed;
    }
    const { text } = decoded;
    const nothing = nothingToImport(options.source, decoded);
    if (nothing !== undefined) {
      io.stderr.write(nothing);
      return EXIT.failed;
    }
    let outcome: SegmentationOutcome;
    try {
      const policy = { format: options.format, minSegmentBytes: options.minSegmentBytes };
      // Byte ranges count the file's bytes: after a skipped byte order mark, through --encoding.
      outcome = inFileBytes(segmentTranscript(text, policy), decoded);
    } catch (error) {
      io.stderr.write(segmentationFailure(error, text));
      return EXIT.failed;
    }
    const input = inputReport(decoded, outcome, options.format);
    if (options.dryRun) {
      io.stdout.write(
        options.json
          ? `${JSON.stringify({ ...dryRunReport(outcome), input })}\n`
          : [...warningLines(input), dryRunTable(outcome)].join("\n"),
      );
      return EXIT.ok;
    }
    try {
      if (options.workspace === undefined) return await store(text, outcome, input, options, io);
      return await withWorkspace({ dir: options.workspace, create: true }, io, (workspace) =>
        store(text, outcome, input, options, io, workspace),
      );
    } catch (error) {
      io.stderr.write(`import: ${escapeControls(describeFailure(error))}\n`);
      return EXIT.failed;
    }
  },
});

function parseImportArgs({
  values,
  positionals,
}: CommandLine<typeof IMPORT_OPTIONS>): ImportOptions {
  const [source, ...extra] = positionals;
  if (source === undefined) throw new Error("expected a transcript file (or - for standard input)");
  if (extra.length > 0) throw new Error(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (values.conversation === undefined || values.conversation === "") {
    throw new Error("--conversation ID is required");
  }
  const format = values.format ?? DEFAULT_SEGMENTATION_POLICY.format;
  if (format !== "auto" && format !== "plain" && format !== "jsonl") {
    throw new Error(`--format must be auto, plain or jsonl (got ${JSON.stringify(format)})`);
  }
  const minText = values["min-segment-bytes"];
  if (minText !== undefined && !/^\d+$/.test(minText)) {
    throw new Error(
      `--min-segment-bytes must be a whole number of bytes (got ${JSON.stringify(minText)})`,
    );
  }
  const extractionFlags = ["results-table", "extractor", "llm-endpoint", "model"] as const;
  const stray = extractionFlags.find((flag) => values[flag] !== undefined);
  if (!values.extract && stray) throw new Error(`--${stray} needs --extract`);
  if (values["dry-run"] && (values.extract || values.table || values.workspace)) {
    throw new Error("--dry-run writes nothing: leave out --extract, --table and --workspace");
  }
  const tableFlag = (["table", "results-table"] as const).find((f) => values[f] !== undefined);
  if (values.workspace !== undefined && tableFlag) {
    throw new Error(`--workspace and --${tableFlag} name two places: give one`);
  }
  const workspace = values["dry-run"]
    ? undefined
    : workspaceDir(
        values.workspace,
        values.table !== undefined || Boolean(process.env.AWS_ENDPOINT_URL_DYNAMODB),
      );
  const model = parseModelFlags<never>(values, IMPORT_EXTRACTORS);
  return {
    source,
    conversation: values.conversation,
    format,
    encoding: values.encoding === undefined ? undefined : parseEncoding(values.encoding),
    minSegmentBytes:
      minText === undefined ? DEFAULT_SEGMENTATION_POLICY.minSegmentBytes : Number(minText),
    dryRun: values["dry-run"] ?? false,
    json: values.json ?? false,
    workspace,
    table: values.table,
    extract: values.extract ? { ...model, resultsTable: values["results-table"] } : undefined,
  };
}

/**
 * The `--dry-run --json` report's segmentation: exactly the fields docs/transcripts.md
 * documents (the command adds `input`).
 */
function dryRunReport(outcome: SegmentationOutcome) {
  return {
    formatDetected: outcome.formatDetected,
    segments: outcome.segments.map((s, index) => ({
      index,
      turn: s.turn,
      role: s.role,
      kind: s.kind,
      byteStart: s.byteStart,
      byteEnd: s.byteEnd,
    })),
    mergedSegments: outcome.mergedSegments,
  };
}

function dryRunTable(outcome: SegmentationOutcome): string {
  const rows = outcome.segments.map((s, index) => [
    String(index),
    String(s.turn),
    s.role === null ? "-" : escapeControls(s.role),
    s.kind,
    `${s.byteStart}..${s.byteEnd}`,
    String(s.byteEnd - s.byteStart),
  ]);
  const header = ["index", "turn", "role", "kind", "byte range", "bytes"];
  return `${[
    `format ${outcome.formatDetected}, ${plural(outcome.segments.length, "segment")}, ${outcome.mergedSegments} merged`,
    ...columns([header, ...rows]),
  ].join("\n")}\n`;
}

/**
 * Stores the turns (in the workspace's tables, or fresh local ones when neither a workspace nor
 * a table is named), then with `--extract` extracts the conversation; writes the outcome.
 */
async function store(
  text: string,
  outcome: SegmentationOutcome,
  input: InputReport,
  options: ImportOptions,
  io: CommandIO,
  workspace?: Workspace,
): Promise<number> {
  const fresh = workspace === undefined && options.table === undefined;
  const emulators: Emulators | undefined = fresh ? await startEmulators({ sqs: false }) : undefined;
  try {
    const dynamodb = workspace?.dynamodb() ?? emulators?.dynamodb() ?? new DynamoDBClient({});
    const suffix = `${Date.now().toString(36)}`;
    const table =
      options.table ?? workspace?.tables.conversationsTable ?? `import-${suffix}-conversations`;
    if (fresh) await createMessagesTable(dynamodb, table);
    const turns = importedTurns(outcome);
    const messages = transcriptMessages(text, turns);
    const written = await onTable(
      {
        table,
        role: "the history table",
        fix: "pass an existing messages table with --table (the stack's ConversationsTableName), or leave --table out for a fresh local one",
      },
      () =>
        new DynamoDbStore({ client: dynamodb, tableName: table }).write(
          options.conversation,
          messages,
        ),
    );
    const unchanged = written.existing?.length ?? 0;
    const report: Record<string, unknown> = {
      conversation: options.conversation,
      table,
      formatDetected: outcome.formatDetected,
      mergedSegments: outcome.mergedSegments,
      stored: messages.length - unchanged,
      unchanged,
      turns: turns.map((turn, i) => ({
        index: turn.index,
        id: messages[i].id,
        role: messages[i].role,
        label: turn.label,
        byteStart: turn.byteStart,
        byteEnd: turn.byteEnd,
        rendered: turn.rendered,
        timestamp: turn.timestamp,
      })),
      input,
    };
    const lines = [
      ...warningLines(input),
      `imported ${escapeControls(JSON.stringify(options.conversation))}: ${plural(turns.length, "turn")} from ${plural(outcome.segments.length, "segment")} (${outcome.formatDetected}, ${outcome.mergedSegments} merged); ${messages.length - unchanged} stored, ${unchanged} already there, in table ${table}${workspace === undefined ? (fresh ? " (local emulator)" : "") : ` (workspace ${workspace.dir})`}`,
      ...turns.map(
        (turn, i) =>
          `  ${messages[i].id}  ${messages[i].role.padEnd(9)} ${escapeControls(JSON.stringify(turn.label))}, bytes ${turn.byteStart}..${turn.byteEnd}, ${turn.segments.map((s) => s.kind).join("+")}${messages[i].ts === undefined ? "" : `, ${new Date(messages[i].ts as number).toISOString()}`}`,
      ),
    ];
    if (options.extract) {
      const extraction = await extract(
        text,
        turns,
        messages,
        table,
        options,
        options.extract,
        dynamodb,
        workspace?.tables.resultsTable ?? `import-${suffix}-results`,
        fresh,
        io,
      );
      report.extraction = extraction.report;
      lines.push(extraction.summary, formatTopics(options.conversation, extraction.topics));
    }
    io.stdout.write(options.json ? `${JSON.stringify(report)}\n` : `${lines.join("\n")}\n`);
    return 0;
  } finally {
    await emulators?.stop();
  }
}

async function extract(
  text: string,
  turns: ReturnType<typeof importedTurns>,
  messages: ReturnType<typeof transcriptMessages>,
  table: string,
  options: ImportOptions,
  choice: NonNullable<ImportOptions["extract"]>,
  dynamodb: DynamoDBClient,
  defaultResultsTable: string,
  fresh: boolean,
  io: CommandIO,
): Promise<{ report: Record<string, unknown>; summary: string; topics: Topic[] }> {
  const resultsTable = choice.resultsTable ?? defaultResultsTable;
  if (choice.resultsTable === undefined && fresh) await createResultsTable(dynamodb, resultsTable);
  const config = localExtractConfig({ resultsTable, messagesTable: table }, choice, {
    ...ANALYZER_DEFAULTS,
    route: "prefix",
  });
  const { extractor } = localExtractDependencies(config, choice, { dynamodb, now: io.now });
  const envelope = conversationSegment(
    options.conversation,
    transcriptId(text),
    messages,
    io.now(),
  );
  const results = {
    table: resultsTable,
    role: "the results table",
    fix: "pass an existing results table with --results-table (the stack's ResultsTableName), or leave it out for a fresh one",
  };
  let outcome: Awaited<ReturnType<typeof extractor.extract>>;
  try {
    outcome = await extractor.extract(envelope.segment, envelope.messages, {
      turns: turns.map((turn, i) => ({ role: messages[i].role, content: turn.rendered })),
    });
  } catch (error) {
    const cause = llmFailureCause(error, choice);
    if (cause === undefined) throw new CommandFailure(tableProblem(error, results));
    io.stderr.write(`${llmFailureLine("import", cause)}\n`);
    throw new CommandFailure(
      `the turns are stored in table ${table}, but the conversation was not extracted: ${cause.hint}, then run the same command again`,
    );
  }
  const reader = new KnowledgeReader({ client: dynamodb, tableName: resultsTable });
  const topics = await onTable(results, () => reader.topics(options.conversation));
  const { usage, model, promptVersion } = outcome.result;
  return {
    topics,
    report: {
      resultsTable,
      status: outcome.status,
      segmentId: outcome.result.segmentId,
      model,
      promptVersion,
      usage,
      candidates: outcome.result.candidates,
    },
    summary: `extracted (${model}, prompt ${promptVersion}): ${outcome.status}, ${plural(outcome.result.candidates.length, "candidate")}, ${plural(usage.calls, "call")}, ${formatCount(usage.inputTokens)} input tokens; results table ${resultsTable}`,
  };
}
