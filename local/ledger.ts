/**
 * A local workspace's segment ledger: every segment delivered to a command's segment queue, with
 * its v1 message body, kept in a table of the workspace. The queue (the SQS emulator, in the
 * command's memory) ends with the command; the ledger does not, so that the next command can send
 * again what was delivered and never extracted (the command was killed, the model was down). An
 * entry is written before its segment is sent, so no delivered segment is missing from it; a
 * resend after a crash writes the same entry again. Its own table, keyed like the results
 * (channel, then segment id), so that a segment's ledger entry is found and removed with its
 * result, and no reader of the results table takes one for a result.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, paginateQuery, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { realSleep } from "convoseg/backoff";
import type { ChannelPart } from "convoseg/channel-deletion";
import { batchWriteAll, createTable, documentClient } from "convoseg/dynamodb";
import { type AuthorRef, authorMatches, mentions } from "convoseg/history/changes";
import type { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentDelivery } from "convoseg/pipeline";
import {
  encodeBody,
  type InlineMessage,
  parseSegmentBody,
  type SegmentMessageV1,
} from "convoseg/pipeline/contract";

/** One delivered segment as the ledger keeps it. */
export interface LedgerEntry {
  channel: string;
  segmentId: string;
  /** The message body as it was sent (v1). */
  body: string;
}

const PACING = { baseDelayMs: 50, maxDelayMs: 2000, random: Math.random, sleep: realSleep };

export class SegmentLedger {
  private readonly documents: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    readonly tableName: string,
  ) {
    this.documents = documentClient(client);
  }

  /** Creates the ledger's table (partition `channel`, sort `segmentId`). */
  static create(client: DynamoDBClient, tableName: string): Promise<void> {
    return createTable(client, {
      TableName: tableName,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [
        { AttributeName: "channel", AttributeType: "S" },
        { AttributeName: "segmentId", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "channel", KeyType: "HASH" },
        { AttributeName: "segmentId", KeyType: "RANGE" },
      ],
    });
  }

  /** Records segments about to be sent (again: the same entries). */
  async record(entries: readonly SegmentDelivery[]): Promise<void> {
    await this.batchWrite(
      entries.map(({ segment, body }) => ({
        PutRequest: {
          Item: { channel: segment.channel, segmentId: segment.segmentId, v: 1, body },
        },
      })),
    );
  }

  /**
   * A channel's entries as `channel delete` removes them: they are segments the next run would
   * extract again when their results are gone, so they go before the messages and results.
   */
  get channelPart(): ChannelPart {
    return {
      name: "ledger",
      table: this.tableName,
      count: async (channel) => (await this.channelKeys(channel)).length,
      remove: async (channel) => {
        const keys = await this.channelKeys(channel);
        await this.batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
        return keys.length;
      },
    };
  }

  /**
   * Erases a person from the delivered bodies (an erasure on a workspace): each inline message
   * of theirs (by `userId`, or by stored name without one: `authorMatches`) keeps its id and
   * time, as a deleted message does, and loses its text, author and user id (a resend extracts
   * the segment without it, as extraction drops deleted messages); a thread's root of theirs
   * goes (a body goes without a root deleted). A channel name that names them (a private chat
   * is named after the one it is with: their names are the given one and those their messages
   * carry) leaves every message of the entries. With `channels`, only theirs. Resolves to the
   * entries rewritten; a repeat rewrites none.
   */
  async eraseAuthor(refs: readonly AuthorRef[], channels?: readonly string[]): Promise<number> {
    const theirs = (m: InlineMessage) => refs.some((ref) => authorMatches(m, ref));
    const only = channels === undefined ? undefined : new Set(channels);
    const entries = (await this.entries()).filter((e) => only === undefined || only.has(e.channel));
    const names = new Set(refs.flatMap((ref) => (ref.user === undefined ? [] : [ref.user])));
    for (const { segment } of entries) {
      for (const m of [
        ...(segment.messages ?? []),
        ...(segment.threadRoot ? [segment.threadRoot] : []),
      ]) {
        if (m.author !== undefined && theirs(m)) names.add(m.author);
      }
    }
    const named = (m: InlineMessage) =>
      m.channelName !== undefined && [...names].some((name) => mentions(m.channelName ?? "", name));
    const erased = (m: InlineMessage): InlineMessage => {
      if (theirs(m)) return { id: m.id, ts: m.ts, text: "", ...(m.kind ? { kind: m.kind } : {}) };
      if (!named(m)) return m;
      const { channelName: _, ...rest } = m;
      return rest;
    };
    // Bodies without their messages first: while one with them is left, a run again learns
    // their names from it.
    const writes: { holds: boolean; request: Record<string, unknown> }[] = [];
    for (const entry of entries) {
      const { messages, threadRoot } = entry.segment;
      const holds =
        (messages ?? []).some(theirs) || (threadRoot !== undefined && theirs(threadRoot));
      if (!holds && !(messages ?? []).some(named) && !(threadRoot && named(threadRoot))) continue;
      const { threadRoot: _, ...rest } = entry.segment;
      const segment: SegmentMessageV1 = {
        ...rest,
        ...(messages === undefined ? {} : { messages: messages.map(erased) }),
        ...(threadRoot === undefined || theirs(threadRoot)
          ? {}
          : { threadRoot: erased(threadRoot) }),
      };
      writes.push({
        holds,
        request: {
          PutRequest: {
            Item: {
              channel: entry.channel,
              segmentId: entry.segmentId,
              v: 1,
              body: encodeBody(segment),
            },
          },
        },
      });
    }
    writes.sort((a, b) => Number(a.holds) - Number(b.holds));
    await this.batchWrite(writes.map((w) => w.request));
    return writes.length;
  }

  private async channelKeys(channel: string): Promise<Record<string, unknown>[]> {
    const keys: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.documents },
      {
        TableName: this.tableName,
        ConsistentRead: true,
        KeyConditionExpression: "channel = :c",
        ProjectionExpression: "channel, segmentId",
        ExpressionAttributeValues: { ":c": channel },
      },
    );
    for await (const page of pages) keys.push(...(page.Items ?? []));
    return keys;
  }

  private batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    return batchWriteAll(requests, {
      documents: this.documents,
      tableName: this.tableName,
      maxAttempts: 8,
      pacing: PACING,
    });
  }

  /** Every entry, by channel, then in segment order (by first message). */
  async entries(): Promise<(LedgerEntry & { segment: SegmentMessageV1 })[]> {
    const found: (LedgerEntry & { segment: SegmentMessageV1 })[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: start }),
      );
      for (const item of page.Items ?? []) {
        const body = String(item.body);
        found.push({
          channel: String(item.channel),
          segmentId: String(item.segmentId),
          body,
          segment: parseSegmentBody(body),
        });
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return found.sort(
      (a, b) =>
        (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0) ||
        a.segment.first.ts - b.segment.first.ts ||
        (a.segmentId < b.segmentId ? -1 : a.segmentId > b.segmentId ? 1 : 0),
    );
  }

  /** The entries whose segment has no result in `results` yet, in ledger order. */
  async unextracted(results: KnowledgeReader): Promise<LedgerEntry[]> {
    const entries = await this.entries();
    const extracted = new Set<string>();
    for (const channel of new Set(entries.map((e) => e.channel))) {
      for (const result of await results.results(channel)) {
        extracted.add(`${channel}\u0000${result.segmentId}`);
      }
    }
    return entries.filter((e) => !extracted.has(`${e.channel}\u0000${e.segmentId}`));
  }
}
