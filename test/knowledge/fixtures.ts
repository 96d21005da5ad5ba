/**
 * What the extraction tests share: a results table on DynamoDB Local, segments of chat whose
 * messages mention `#topics`, and a scripted OpenAI-compatible server that answers each window
 * with the topics its excerpt mentions (with the turns that mention them), as a model would.
 */
import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Analyzer, type LLM } from "convoseg/extraction";
import { OpenAICompatibleLLM } from "convoseg/extraction/llm";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { ANALYZER_DEFAULTS } from "convoseg/knowledge/config";
import { DynamoDbResultStore, type SegmentEnvelope } from "convoseg/knowledge/store";
import { resultsTableDefinition } from "convoseg/knowledge/store/schema";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import type { InlineMessage } from "convoseg/pipeline/contract";
import { createTestTable } from "../support/dynamodb.js";
import {
  chatCompletion,
  type RecordedRequest,
  type ScriptedResponse,
} from "../support/llm-servers.js";

export const ANALYSIS = {
  route: "sliding",
  windowSize: 4,
  overlap: 1,
  prefixStep: 5,
  maxWindows: 8,
} as const;

/** The chat defaults, as the function reads them. */
export const CHAT_ANALYSIS = ANALYZER_DEFAULTS;

/** 10 messages in windows of 4 overlapping by 1: [0,4), [3,7), [6,10). */
export const WINDOWS_OF_TEN = 3;

export async function createResultsTestTable(client: DynamoDBClient): Promise<string> {
  const { TableName: _, ...definition } = resultsTableDefinition("unused");
  return createTestTable(client, definition, "results");
}

/**
 * An empty messages table: the consumer reads a segment's messages' current states from it (none
 * stored: each message stands as its body has it).
 */
export async function createMessagesTestTable(client: DynamoDBClient): Promise<string> {
  const tableName = `messages-${randomUUID()}`;
  await createMessagesTable(client, tableName);
  return tableName;
}

/** A segment of `texts`, one message each, a minute apart. */
export function segmentOf(
  segmentId: string,
  texts: readonly string[],
  channel = "help",
): { segment: SegmentEnvelope; messages: InlineMessage[] } {
  const start = Date.UTC(2026, 0, 1);
  const messages = texts.map((text, i) => ({
    id: `${segmentId}-m${i}`,
    ts: start + i * 60_000,
    author: i % 2 === 0 ? "alice" : "bob",
    text,
  }));
  return {
    segment: {
      segmentId,
      channel,
      late: false,
      belongsAfter: null,
      count: messages.length,
      first: { id: messages[0].id, ts: messages[0].ts },
      last: { id: messages.at(-1)?.id ?? "", ts: messages.at(-1)?.ts ?? 0 },
    },
    messages,
  };
}

/** Ten messages about three topics: #grub (0-2), #wifi (4-7), #kernel (8-9). */
export const TEN_TEXTS = [
  "my #grub menu is gone",
  "reinstall #grub from a live usb",
  "that fixed #grub, thanks",
  "anyone around?",
  "my #wifi drops every hour",
  "which #wifi chip is it",
  "an intel one",
  "try the #wifi power save setting",
  "now the #kernel panics",
  "boot the previous #kernel",
];

export const PROMPT_TOKENS = 100;
export const COMPLETION_TOKENS = 7;

/**
 * The topics of a window prompt: every `#word` of its excerpt, with the first and last turn
 * (1-based, as rendered) that mentions it.
 */
export function topicsOfPrompt(prompt: string): { topic: string; range: [number, number] }[] {
  const found = new Map<string, [number, number]>();
  for (const line of prompt.split("\n")) {
    const turn = /^Turn (\d+) \[USER\](?: "(?:[^"\\]|\\.)*")?: (".*")$/.exec(line);
    if (!turn) continue;
    for (const [, word] of (JSON.parse(turn[2]) as string).matchAll(/#(\w+)/g)) {
      const n = Number(turn[1]);
      const range = found.get(word);
      found.set(word, range ? [range[0], n] : [n, n]);
    }
  }
  return [...found].map(([topic, range]) => ({ topic, range }));
}

export function promptOf(request: RecordedRequest): string {
  const body = request.body as { messages: { role: string; content: string }[] };
  // The user message: the system prompt before it is the same for every request.
  return body.messages.find((m) => m.role === "user")?.content ?? "";
}

/** The model's answer to a window: its topics as candidates, JSON as the schema asks. */
export function answerTopics(request: RecordedRequest): ScriptedResponse {
  const candidates = topicsOfPrompt(promptOf(request)).map(({ topic, range }) => ({
    topic,
    reason: `talked about ${topic}`,
    confidence: 0.9,
    tags: ["support", topic],
    turn_range: range,
    subjective: false,
    wiki_worthy: null,
  }));
  return chatCompletion(JSON.stringify({ candidates }), {
    usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS },
  });
}

export function openAI(url: string, model = "test-model"): LLM {
  return new OpenAICompatibleLLM({ baseURL: `${url}/v1`, apiKey: "test", model, maxRetries: 0 });
}

export interface ExtractorSetup {
  client: DynamoDBClient;
  tableName: string;
  llm: LLM;
  model?: string;
  now?: () => number;
  owner?: () => string;
  concurrency?: number;
}

export function extractorOf(setup: ExtractorSetup): SegmentExtractor {
  return new SegmentExtractor({
    store: new DynamoDbResultStore({ client: setup.client, tableName: setup.tableName }),
    extractor: new Analyzer(setup.llm, { ...ANALYSIS, maxConcurrency: setup.concurrency ?? 1 }),
    model: setup.model ?? "test-model",
    promptVersion: promptVersionOf(ANALYSIS),
    leaseMs: 60_000,
    now: setup.now,
    owner: setup.owner,
  });
}
