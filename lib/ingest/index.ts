/**
 * Ingestion: chat platform messages into the history store, one conversation per channel. Every
 * message gets an answer: stored, rejected (invalid, with the field at fault) or failed (the store
 * did not confirm it; `uncertain` when it may have been stored after all). Valid messages are
 * written even when others in the same call are invalid.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../history/dynamodb/store.js";
import { findCause } from "../history/errors.js";
import { type Message, textMessage } from "../history/message.js";
import { WriteError } from "../history/outcome.js";
import type { Writer } from "../history/store.js";
import { type ChatMessage, InvalidMessageError, parseChatMessage } from "../messages/index.js";

/** A chat message as an ingestion caller sends it (the JSON-lines input format). */
export interface ChatMessageInput {
  id: string | number;
  /** ISO-8601 with a zone, or epoch milliseconds. */
  ts: string | number;
  channel?: string;
  user?: string | null;
  text?: string | null;
}

export interface Rejection {
  index: number;
  field: string;
  problem: string;
}

export interface Failure {
  index: number;
  error: string;
  /** The message may have been stored anyway: resubmitting it is safe (ids deduplicate). */
  uncertain: boolean;
}

export interface IngestResult {
  /** Indexes of the messages the store confirmed (including repeats of stored ids). */
  stored: number[];
  rejected: Rejection[];
  failed: Failure[];
}

/** How a chat message is kept in history: a user's text, with the platform's id, time and author. */
export function historyMessage(message: ChatMessage): Message {
  return textMessage("user", message.text ?? "", {
    id: message.id,
    ts: message.ts,
    ...(message.user ? { author: message.user } : {}),
  });
}

/**
 * Validates each input, then writes the valid ones channel by channel (channels concurrently,
 * at most `concurrency` at a time), in input order within a channel.
 */
export async function ingest(
  writer: Writer,
  inputs: readonly unknown[],
  options: { concurrency?: number; signal?: AbortSignal } = {},
): Promise<IngestResult> {
  const result: IngestResult = { stored: [], rejected: [], failed: [] };
  const channels = new Map<string, { indexes: number[]; messages: Message[] }>();
  inputs.forEach((input, index) => {
    try {
      const message = parseChatMessage(input);
      const channel = channels.get(message.channel) ?? { indexes: [], messages: [] };
      channels.set(message.channel, channel);
      channel.indexes.push(index);
      channel.messages.push(historyMessage(message));
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      result.rejected.push({ index, field: error.field, problem: error.problem });
    }
  });
  const work = [...channels].map(([channel, { indexes, messages }]) => async () => {
    try {
      await writer.write(channel, messages, { signal: options.signal });
      result.stored.push(...indexes);
    } catch (error) {
      const outcome = findCause(error, WriteError)?.outcome ?? { accepted: 0, uncertain: true };
      result.stored.push(...indexes.slice(0, outcome.accepted));
      for (const index of indexes.slice(outcome.accepted)) {
        result.failed.push({
          index,
          error: (error as Error).message,
          uncertain: outcome.uncertain,
        });
      }
    }
  });
  await runLimited(work, options.concurrency ?? 8);
  result.stored.sort((a, b) => a - b);
  result.failed.sort((a, b) => a.index - b.index);
  return result;
}

async function runLimited(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

/**
 * The typed client for users' own ingestion Lambdas (a Discord bot, a Slack events handler):
 * writes chat messages into convoseg's messages table through the history store.
 *
 * ```ts
 * const ingestion = new IngestClient({ tableName: process.env.MESSAGES_TABLE! });
 * const { rejected, failed } = await ingestion.ingest([{ id, ts, channel, user, text }]);
 * ```
 */
export class IngestClient {
  private readonly store: DynamoDbStore;

  constructor(options: { tableName: string; client?: DynamoDBClient }) {
    this.store = new DynamoDbStore({
      client: options.client ?? new DynamoDBClient({}),
      tableName: options.tableName,
    });
  }

  ingest(
    messages: readonly ChatMessageInput[],
    options?: { signal?: AbortSignal },
  ): Promise<IngestResult> {
    return ingest(this.store, messages, options);
  }
}
