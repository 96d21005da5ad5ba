import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../../history/dynamodb/index.js";
import {
  correctResult,
  DynamoDbResultStore,
  type ResultStore,
  type SegmentResult,
  type TopicSupport,
} from "../../knowledge/store/index.js";

/** One message of a period, as activity counts it: when, who, and its segment when it has one. */
export interface ActivityMessage {
  ts: number;
  author?: string;
  segmentId?: string;
}

/**
 * What the platform's link to a message needs of it besides its channel: its id, platform,
 * thread, and its Discord guild or public Telegram group's name.
 */
export interface MessageLink {
  id: string;
  platform?: string;
  thread?: string;
  guild?: string;
  chatUsername?: string;
}

/** An answering message, as the health table reads it: when and by whom, never the text. */
export interface AnswerMessage {
  id: string;
  ts: number;
  author?: string;
  /** A bot's: it answers, but is never named among the answerers. */
  bot?: boolean;
}

/** What a digest is built from: the port its DynamoDB and memory implementations serve. */
export interface DigestSources {
  /** The channel's stored results (SegmentResult[] from lib/knowledge: listResults). */
  results(channel: string): Promise<SegmentResult[]>;
  /** The channel's topic index entries (TopicSupport[]: listSupports). */
  supports(channel: string): Promise<TopicSupport[]>;
  /** The channel's messages in [since, until): ts and author only (for activity). */
  activity(channel: string, since: number, until: number): Promise<ActivityMessage[]>;
  /**
   * The channel's messages with these ids (the evidence a digest shows, one per entry), as the
   * platform's link to each needs them; ids not stored and deleted messages left out.
   */
  links(channel: string, ids: readonly string[]): Promise<MessageLink[]>;
  /**
   * The channel's messages with these ids (the answers to the period's questions) as the health
   * table needs them; ids not stored and deleted messages (an erased person's) left out.
   */
  answers(channel: string, ids: readonly string[]): Promise<AnswerMessage[]>;
}

/** Reads a channel's messages by id: what `DynamoDbStore` and `MemoryStore` both answer. */
export interface MessagesById {
  getMessages(
    channel: string,
    ids: readonly string[],
  ): Promise<
    {
      ts?: number;
      author?: string;
      kind?: string;
      deleted?: boolean;
      id?: string;
      platform?: string;
      thread?: string;
      guild?: string;
      chatUsername?: string;
    }[]
  >;
}

/**
 * Digest sources over a result store and a message store: results and the topic index as the
 * store lists them; activity from the messages of the results whose span meets the period, read
 * by id (batches of 100), so that a period costs the channel's results plus its own messages and
 * never a scan. Messages of a still open segment (in no result yet) are not counted; nor are
 * those of a result too large to list its message ids (`trimmed.messageIds`). Links read the
 * messages named by id, as activity does: the few a digest shows.
 */
export function storeDigestSources(store: ResultStore, messages: MessagesById): DigestSources {
  const results = new Map<string, Promise<SegmentResult[]>>();
  const listed = (channel: string): Promise<SegmentResult[]> => {
    let found = results.get(channel);
    if (found === undefined) {
      // People's corrections laid over the model's questions, as every read of them does.
      found = Promise.all([store.listResults(channel), store.listCorrections(channel)]).then(
        ([listed, corrections]) => listed.map((result) => correctResult(result, corrections)),
      );
      results.set(channel, found);
    }
    return found;
  };
  const byId = async (channel: string, ids: readonly string[]) =>
    ids.length === 0
      ? []
      : (await messages.getMessages(channel, ids)).filter(
          (m) => m.id !== undefined && m.deleted !== true,
        );
  return {
    results: listed,
    supports: (channel) => store.listSupports(channel),
    activity: async (channel, since, until) => {
      const activity: ActivityMessage[] = [];
      for (const result of await listed(channel)) {
        if (result.last.ts < since || result.first.ts >= until) continue;
        const ids = result.messageIds ?? [];
        for (const message of await messages.getMessages(channel, ids)) {
          const ts = message.ts;
          if (message.deleted === true || ts === undefined || ts < since || ts >= until) continue;
          activity.push({
            ts,
            ...(message.author === undefined ? {} : { author: message.author }),
            segmentId: result.segmentId,
          });
        }
      }
      return activity;
    },
    links: async (channel, ids) =>
      (await byId(channel, ids)).map((m) => ({
        id: m.id as string,
        ...(m.platform === undefined ? {} : { platform: m.platform }),
        ...(m.thread === undefined ? {} : { thread: m.thread }),
        ...(m.guild === undefined ? {} : { guild: m.guild }),
        ...(m.chatUsername === undefined ? {} : { chatUsername: m.chatUsername }),
      })),
    answers: async (channel, ids) =>
      (await byId(channel, ids)).flatMap((m) =>
        m.ts === undefined
          ? []
          : [
              {
                id: m.id as string,
                ts: m.ts,
                ...(m.author === undefined ? {} : { author: m.author }),
                ...(m.kind === "bot" && { bot: true }),
              },
            ],
      ),
  };
}

/** {@link storeDigestSources} on a deployment's (or the workspace's) DynamoDB tables. */
export function dynamoDbDigestSources(options: {
  client: DynamoDBClient;
  resultsTable: string;
  messagesTable: string;
}): DigestSources {
  const messages = new DynamoDbStore({ client: options.client, tableName: options.messagesTable });
  return storeDigestSources(
    new DynamoDbResultStore({ client: options.client, tableName: options.resultsTable }),
    // Never the text: the API's and the digest's roles may read these attributes only
    // (ACTIVITY_ATTRIBUTES: when, by whom, what kind, whether deleted, and where: platform,
    // thread, guild, public group name).
    { getMessages: (channel, ids) => messages.messageFacts(channel, ids) },
  );
}
