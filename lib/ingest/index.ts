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
import { ChannelStore } from "../pipeline/channel-store.js";

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
export interface IngestOptions {
  concurrency?: number;
  signal?: AbortSignal;
  /**
   * Tells the pipeline that a channel has new messages (ChannelStore.markArrivals), after they
   * are stored. If it fails, the channel's messages are reported failed and uncertain: they are
   * stored, and resubmitting them (a no-op write) retries the mark.
   */
  markArrivals?: (channel: string) => Promise<void>;
}

export async function ingest(
  writer: Writer,
  inputs: readonly unknown[],
  options: IngestOptions = {},
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
    const { accepted, failure } = await storeChannel(writer, channel, messages, options);
    result.stored.push(...indexes.slice(0, accepted));
    for (const index of indexes.slice(accepted)) result.failed.push({ index, ...failure });
  });
  await runLimited(work, options.concurrency ?? 8);
  result.stored.sort((a, b) => a - b);
  result.failed.sort((a, b) => a.index - b.index);
  return result;
}

/**
 * Writes one channel's messages and marks the channel for segmentation; returns how many were
 * confirmed, and why the rest were not.
 */
async function storeChannel(
  writer: Writer,
  channel: string,
  messages: Message[],
  options: IngestOptions,
): Promise<{ accepted: number; failure: Omit<Failure, "index"> }> {
  let accepted = messages.length;
  let failure = { error: "", uncertain: false };
  try {
    await writer.write(channel, messages, { signal: options.signal });
  } catch (error) {
    const outcome = findCause(error, WriteError)?.outcome ?? { accepted: 0, uncertain: true };
    accepted = outcome.accepted;
    failure = { error: (error as Error).message, uncertain: outcome.uncertain };
  }
  if (accepted > 0 && options.markArrivals) {
    try {
      await options.markArrivals(channel);
    } catch (error) {
      accepted = 0;
      failure = {
        error: `stored, but not scheduled for segmentation: ${(error as Error).message}`,
        uncertain: true,
      };
    }
  }
  return { accepted, failure };
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
 * writes chat messages into convoseg's messages table through the history store and marks their
 * channels for the next segmentation tick.
 *
 * ```ts
 * const ingestion = new IngestClient({
 *   messagesTable: process.env.MESSAGES_TABLE!,
 *   channelsTable: process.env.CHANNELS_TABLE!,
 * });
 * const { rejected, failed } = await ingestion.ingest([{ id, ts, channel, user, text }]);
 * ```
 */
export class IngestClient {
  private readonly store: DynamoDbStore;
  private readonly channels: ChannelStore;

  constructor(options: { messagesTable: string; channelsTable: string; client?: DynamoDBClient }) {
    const client = options.client ?? new DynamoDBClient({});
    this.store = new DynamoDbStore({ client, tableName: options.messagesTable });
    this.channels = new ChannelStore({ client, tableName: options.channelsTable });
  }

  ingest(
    messages: readonly ChatMessageInput[],
    options?: { signal?: AbortSignal },
  ): Promise<IngestResult> {
    return ingest(this.store, messages, {
      ...options,
      markArrivals: (channel) => this.channels.markArrivals(channel, Date.now()),
    });
  }
}
