/**
 * `--ask-links` on `disentangle` and `segment`: the links the linker is least sure of asked of a
 * model, as the tick asks them (`convoseg/linker`'s `LinkAdvisor`), over a whole channel at once:
 * the linker runs once to find them, they are asked in batches, and the answers offered are taken
 * as choices when the channel is linked for good. A batch that fails keeps the linker's own links.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import {
  type AdvisedMessage,
  type LinkAdvisor,
  type LinkChoice,
  type LinkInput,
  type LinkQuestion,
  questionOf,
  ReplyLinker,
  takenAnswers,
} from "convoseg/linker";
import { localLinkAdvisor } from "../../local/extraction.js";
import type { LocalModel } from "../../local/model.js";
import { escapeControls, formatCount } from "./format.js";
import { type ModelFlags, parseModelFlags } from "./model-options.js";
import type { Progress, ProgressStream } from "./progress.js";

/** The flags of `--ask-links`, for a command's `parseArgs` options. */
export const ASK_LINKS_OPTIONS = {
  "ask-links": { type: "boolean" },
  extractor: { type: "string" },
  "llm-endpoint": { type: "string" },
  model: { type: "string" },
} as const;

/** Their lines of a command's usage text. */
export const ASK_LINKS_USAGE = `  --ask-links       ask a model about the links the linker is least sure of, in batches; the
                    answers among the options shown are taken, and a batch that fails keeps the
                    linker's own (docs/conversations.md, "Asking a model")
  --extractor E     with --ask-links: openai (default) or bedrock
  --llm-endpoint U  with --ask-links: the OpenAI-compatible base URL (API key from
                    OPENAI_API_KEY, none needed on this machine), or a Bedrock endpoint override
  --model ID        with --ask-links: the model (default: gpt-4o-mini for openai,
                    amazon.nova-lite-v1:0 for bedrock)`;

/** What asking did for a channel: the choices to link with, and the counts to report. */
export interface ChannelAdvice {
  choices: Map<string, LinkChoice>;
  asked: number;
  /** Answers taken that differ from the link the linker made alone. */
  changed: number;
  failures: string[];
}

/** The model `--ask-links` asks, from the model flags; none without it (and then no model flag). */
export function askedModel(
  options: ModelFlags & { "ask-links"?: boolean },
): LocalModel | undefined {
  if (options["ask-links"] !== true) {
    const given = (["extractor", "llm-endpoint", "model"] as const).find(
      (flag) => options[flag] !== undefined,
    );
    if (given !== undefined) throw new Error(`--${given} needs --ask-links`);
    return undefined;
  }
  return parseModelFlags<never>({ ...options, extractor: options.extractor ?? "openai" }, [
    "openai",
    "bedrock",
  ]);
}

/** The advisor on `model`, with no token budget: a run on this machine counts nothing. */
function commandAdvisor(model: LocalModel): LinkAdvisor {
  return localLinkAdvisor(
    { resultsTable: "unused", messagesTable: "unused" },
    {
      ...model,
      // Without a budget nothing is read or counted: the client is never called.
      dynamodb: new DynamoDBClient({ region: process.env.AWS_REGION ?? "us-east-1" }),
      analyzer: ANALYZER_DEFAULTS,
    },
  );
}

/** Asks `advisor` about `inputs`' unsure links (one channel, in order), batch by batch. */
async function adviseChannel(
  channel: string,
  inputs: readonly LinkInput[],
  advisor: LinkAdvisor,
): Promise<ChannelAdvice> {
  // Merging nothing, as the linker links once the model's answers are taken (its merges hedge
  // what it is unsure of, which the model decides instead).
  const linker = new ReplyLinker({ alternatives: advisor.candidates + 1, mergeMargin: 0 });
  const known = new Map<string, AdvisedMessage>();
  const questions: LinkQuestion[] = [];
  // The parent the linker chose alone for each message asked about (null: a start).
  const own = new Map<string, string | null>();
  for (const input of inputs) {
    known.set(input.id, { id: input.id, author: input.author, text: input.text, ts: input.ts });
    const decision = linker.link(input);
    if (decision.source !== "inferred") continue;
    if ((decision.margin ?? Number.POSITIVE_INFINITY) >= advisor.margin) continue;
    const question = questionOf(decision, known, advisor.candidates);
    if (question === undefined) continue;
    questions.push(question);
    own.set(input.id, decision.parent ?? null);
  }
  const choices = new Map<string, LinkChoice>();
  const failures: string[] = [];
  for (let i = 0; i < questions.length; i += advisor.batch) {
    const batch = questions.slice(i, i + advisor.batch);
    try {
      const answers = await advisor.ask(channel, batch, AbortSignal.timeout(advisor.timeoutMs));
      for (const [id, choice] of takenAnswers(batch, answers)) choices.set(id, choice);
    } catch (error) {
      failures.push((error as Error).message);
    }
  }
  const changed = [...choices].filter(([id, choice]) => choice.parent !== own.get(id)).length;
  return { choices, asked: questions.length, changed, failures };
}

/** Asks about one channel's links (in order) under `status` on the status line. */
type ChannelAsker = (
  channel: string,
  inputs: readonly LinkInput[],
  status: string,
) => Promise<ChannelAdvice | undefined>;

/**
 * `command`'s asker: it asks `model` about a channel's unsure links as `adviseChannel` does, and
 * says on `stderr` what was asked, taken and changed; without a model (no `--ask-links`), nothing.
 */
export function channelAsker(
  command: string,
  model: LocalModel | undefined,
  progress: Progress,
  stderr: ProgressStream,
): ChannelAsker {
  if (model === undefined) return async () => undefined;
  const advisor = commandAdvisor(model);
  return async (channel, inputs, status) => {
    progress.update(() => `${status}: asking the model`);
    const advice = await adviseChannel(channel, inputs, advisor);
    progress.finish();
    stderr.write(`${adviceLine(command, channel, advice)}\n`);
    return advice;
  };
}

/** What asking did for a channel, on one line of `command`'s standard error. */
function adviceLine(
  command: string,
  channel: string,
  { choices, asked, changed, failures }: ChannelAdvice,
): string {
  const failed =
    failures.length === 0
      ? ""
      : `; ${formatCount(failures.length)} batch${failures.length === 1 ? "" : "es"} failed (${escapeControls(failures[0] ?? "")}), the linker's own links kept`;
  return `${command}: ${escapeControls(channel)}: asked the model about ${formatCount(asked)} link${asked === 1 ? "" : "s"}, took ${formatCount(choices.size)} answer${choices.size === 1 ? "" : "s"}, ${formatCount(changed)} changing a link${failed}`;
}
