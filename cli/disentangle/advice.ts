/**
 * `disentangle --ask-links`: the links the linker is least sure of asked of a model, as the tick
 * asks them (`convoseg/linker`'s `LinkAdvisor`), over a whole channel at once: the linker runs
 * once to find them, they are asked in batches, and the answers offered are taken as choices when
 * the channel is linked for good. A batch that fails keeps the linker's own links.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import { linkAdvisorOf } from "convoseg/knowledge/write";
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
import { localExtractConfig } from "../../local/extraction.js";
import type { LocalModel } from "../../local/model.js";

/** What asking did for a channel: the choices to link with, and the counts to report. */
export interface ChannelAdvice {
  choices: Map<string, LinkChoice>;
  asked: number;
  failures: string[];
}

/** The advisor on `model`, with no token budget: a run on this machine counts nothing. */
export function commandAdvisor(model: LocalModel): LinkAdvisor {
  const config = localExtractConfig(
    { resultsTable: "unused", messagesTable: "unused" },
    model,
    ANALYZER_DEFAULTS,
  );
  const quiet = () => {};
  return linkAdvisorOf(config, {
    // Without a budget nothing is read or counted: the client is never called.
    dynamodb: new DynamoDBClient({ region: process.env.AWS_REGION ?? "us-east-1" }),
    bedrockEndpoint: model.extractor === "bedrock" ? model.endpoint : undefined,
    ...(model.apiKey === undefined ? {} : { apiKey: model.apiKey }),
    bedrockRegion: process.env.AWS_REGION,
    metrics: { add: quiet },
    logger: { info: quiet, warn: quiet, error: quiet },
  });
}

/** Asks `advisor` about `inputs`' unsure links (one channel, in order), batch by batch. */
export async function adviseChannel(
  channel: string,
  inputs: readonly LinkInput[],
  advisor: LinkAdvisor,
): Promise<ChannelAdvice> {
  const linker = new ReplyLinker({ alternatives: advisor.candidates + 1 });
  const known = new Map<string, AdvisedMessage>();
  const questions: LinkQuestion[] = [];
  for (const input of inputs) {
    known.set(input.id, { id: input.id, author: input.author, text: input.text, ts: input.ts });
    const decision = linker.link(input);
    if (decision.source !== "inferred") continue;
    if ((decision.margin ?? Number.POSITIVE_INFINITY) >= advisor.margin) continue;
    const question = questionOf(decision, known, advisor.candidates);
    if (question !== undefined) questions.push(question);
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
  return { choices, asked: questions.length, failures };
}
