/**
 * `run`'s usage text and flags, and what they parse to ({@link RunOptions}): the replay's
 * settings and, unless `--extractor none`, the extraction's, bounded as the deployment bounds its
 * configuration.
 */
import { parseDuration } from "convoseg/duration";
import type { Route } from "convoseg/extraction";
import {
  ANALYZER_DEFAULTS,
  EXTRACT_BOUNDS,
  EXTRACT_DEFAULTS,
  EXTRACTORS,
  type ExtractFunctionConfig,
  ROUTES,
} from "convoseg/knowledge/config";
import { type ConversationMode, MAX_WORKERS } from "convoseg/pipeline";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import { LLM_FAILURE_BUDGET } from "../../local/llm-failures.js";
import type { LocalModel } from "../../local/model.js";
import type { CommandLine } from "../shared/command.js";
import { chosenConversations, refuseAskLinksContiguous } from "../shared/conversation-streams.js";
import { timezoneOption } from "../shared/export-input.js";
import { parseModelFlags } from "../shared/model-options.js";
import { channelOption } from "../shared/read-messages.js";
import { WORKSPACE_HELP, WORKSPACE_OPTION, workspaceDir } from "../shared/workspace-option.js";

/** The most turns of a sliding window: the extract function's WINDOW_SIZE bound. */
const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;

export const RUN_USAGE = `Usage: npm start -- run [options]

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
                    Mattermost, WhatsApp, an IRC log: see import-chat) or chat messages as
                    JSON lines (the segment command's format); default: a generated
                    multi-channel sample
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
  --conversations M linked (default): a channel's messages outside threads are linked to the
                    messages they answer and each conversation is segmented on its own;
                    contiguous: the channel's timeline is cut at silences and sizes, as before
                    (kept in the workspace: a later run, without the flag, goes on the same way)
  --grace D         extra quiet time before a conversation counts as settled (default 0)
  --workers N       fan each tick out to N workers, one per share of the due index, as a
                    deployment with that many does (default 1; at most ${MAX_WORKERS})
  --skip-invalid    report input lines ingestion would refuse (malformed, or more than
                    DynamoDB takes) and go on without them; without it they stop the run

Extraction:
  --extractor E     offline (default: keyphrases, no LLM; openai when --llm-endpoint or
                    --model is given), openai, bedrock, or none (stop at segments)
  --llm-endpoint U  the OpenAI-compatible base URL (e.g. http://127.0.0.1:8080/v1; API key from
                    OPENAI_API_KEY, none needed on this machine), or a Bedrock endpoint override
  --model ID        the model (default: gpt-4o-mini for openai, amazon.nova-lite-v1:0 for bedrock)
  --route R         sliding (default), prefix, non_prefix, full or full2
  --window-size N   turns per sliding window, at most ${MAX_WINDOW_TURNS} (default 60)
  --overlap N       turns shared by consecutive sliding windows (default 6)
  --max-output-tokens N
                    the output-token limit of every model call, ${EXTRACT_BOUNDS.outputTokens.min} to ${EXTRACT_BOUNDS.outputTokens.max}
                    (default ${EXTRACT_DEFAULTS.MAX_OUTPUT_TOKENS}, as deployed); not with the offline extractor
  --ask-links       ask the model (openai or bedrock) about the links the reply linker is least
                    sure of, a batch per channel per tick; when it fails, the linker's own stand
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

export const RUN_OPTIONS = {
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
  conversations: { type: "string" },
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
  "ask-links": { type: "boolean" },
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
  /** The zone of an export's zone-less times (WhatsApp, IRC logs, old Telegram). */
  timezone?: string;
  out?: string;
  report?: string;
  verbose: boolean;
  tickMs: number;
  settle: number;
  maxSize: number;
  minItems: number;
  /**
   * How messages outside threads become segments, when given; otherwise as the workspace was
   * last segmented, else linked.
   */
  conversations?: ConversationMode;
  grace: number;
  /** Workers each tick fans out to (default 1). */
  workers?: number;
  skipInvalid: boolean;
  extraction?: RunExtractionOptions;
  /** Ask the extraction's model about unsure links (needs a model and linked conversations). */
  askLinks: boolean;
}

export interface RunExtractionOptions extends LocalModel {
  analyzer: ExtractFunctionConfig["analyzer"];
  maxOutputTokens?: number;
  candidates?: string;
  maxAttempts: number;
}

export function parseRunArgs({ values, positionals }: CommandLine<typeof RUN_OPTIONS>): RunOptions {
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
  const extraction = parseExtractionArgs(values, count);
  const askLinks = values["ask-links"] ?? false;
  if (askLinks && (extraction === undefined || extraction.extractor === "offline")) {
    throw new Error("--ask-links needs a model: --extractor openai or bedrock");
  }
  refuseAskLinksContiguous(askLinks, values.conversations);
  return {
    workspace,
    fresh: values.fresh ?? false,
    extraction,
    askLinks,
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
    conversations: chosenConversations(values.conversations),
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
