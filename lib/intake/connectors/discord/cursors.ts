/**
 * Per-source cursors (a channel's or a thread's): the highest snowflake stored, which only ever
 * moves forward (a conditional update: a slow run can never set a faster one back), the ids of
 * the latest messages stored (the re-read window's memory of what should still be there), the
 * channel's metadata, and how far its archived threads were looked at.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type DynamoDBClient,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { isConditionFailure } from "../../../base/dynamodb/index.js";
import { compareSnowflakes } from "./snowflake.js";

export interface CursorState {
  key: string;
  /** The highest snowflake stored; absent until the first message. */
  cursor?: string;
  /** Where reading started (the backfill snowflake, or the first run's time): threads start here. */
  since?: string;
  /** The latest stored ids, oldest first, at most the re-read window. */
  recent: string[];
  name?: string;
  guildId?: string;
  type?: number;
  /** When the metadata was read (clock ms). */
  metaAt?: number;
  /** The latest archive time (ms) of the archived threads looked at: older ones are done. */
  archivedAt?: number;
  /**
   * While a sweep of archived threads takes several runs: the archive time (ISO, as Discord's
   * `before`) it goes on from; empty or absent when none is under way.
   */
  archivedBefore?: string;
  /** While a sweep is under way: the latest archive time (ms) it saw, the mark once it is done. */
  archivedTop?: number;
  /** On the run item only: the channel the next run starts with (a run cut by its deadline). */
  resume?: string;
}

export type CursorFields = Partial<Omit<CursorState, "key" | "cursor">>;

export interface CursorStore {
  getMany(keys: readonly string[]): Promise<Map<string, CursorState>>;
  /** Moves `key`'s cursor to `cursor` if that is forward; false (nothing written) otherwise. */
  advance(key: string, cursor: string, fields?: CursorFields): Promise<boolean>;
  /** Sets fields other than the cursor. */
  update(key: string, fields: CursorFields): Promise<void>;
}

/** The reference, for unit tests. */
export class MemoryCursorStore implements CursorStore {
  readonly items = new Map<string, CursorState>();

  async getMany(keys: readonly string[]): Promise<Map<string, CursorState>> {
    const found = new Map<string, CursorState>();
    for (const key of keys) {
      const item = this.items.get(key);
      if (item) found.set(key, structuredClone(item));
    }
    return found;
  }

  async advance(key: string, cursor: string, fields: CursorFields = {}): Promise<boolean> {
    const item = this.items.get(key);
    if (item?.cursor !== undefined && compareSnowflakes(item.cursor, cursor) >= 0) return false;
    this.items.set(key, { ...(item ?? { key, recent: [] }), ...structuredClone(fields), cursor });
    return true;
  }

  async update(key: string, fields: CursorFields): Promise<void> {
    const item = this.items.get(key) ?? { key, recent: [] };
    this.items.set(key, { ...item, ...structuredClone(fields) });
  }
}

const FIELDS = [
  "since",
  "recent",
  "name",
  "guildId",
  "resume",
  "type",
  "metaAt",
  "archivedAt",
  "archivedBefore",
  "archivedTop",
] as const;

/**
 * On a table keyed by `key` (string). The cursor is a DynamoDB number (38 digits, exact), so the
 * condition compares snowflakes numerically; `recent` is one string of deltas (below).
 */
export class DynamoDbCursorStore implements CursorStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async getMany(keys: readonly string[]): Promise<Map<string, CursorState>> {
    const found = new Map<string, CursorState>();
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += 100) {
      let request: Record<string, AttributeValue>[] = unique
        .slice(i, i + 100)
        .map((key) => ({ key: { S: key } }));
      for (let attempt = 0; request.length > 0; attempt++) {
        if (attempt > 8) throw new Error(`discord cursors: ${request.length} reads unprocessed`);
        const result = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: request, ConsistentRead: true } },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          const state = fromItem(item);
          found.set(state.key, state);
        }
        request = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (request.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
    return found;
  }

  async advance(key: string, cursor: string, fields: CursorFields = {}): Promise<boolean> {
    const { sets, names, values } = assignments(fields);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { key: { S: key } },
          UpdateExpression: `SET ${["#cursor = :cursor", ...sets].join(", ")}`,
          ConditionExpression: "attribute_not_exists(#cursor) OR #cursor < :cursor",
          ExpressionAttributeNames: { ...names, "#cursor": "cursor" },
          ExpressionAttributeValues: { ...values, ":cursor": { N: cursor } },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async update(key: string, fields: CursorFields): Promise<void> {
    const { sets, names, values } = assignments(fields);
    if (sets.length === 0) return;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { key: { S: key } },
        UpdateExpression: `SET ${sets.join(", ")}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}

function assignments(fields: CursorFields) {
  const sets: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = {};
  for (const field of FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] =
      field === "recent"
        ? { S: encodeRecent(value as string[]) }
        : typeof value === "number"
          ? { N: String(value) }
          : { S: value as string };
    sets.push(`#${field} = :${field}`);
  }
  return { sets, names, values };
}

function fromItem(item: Record<string, AttributeValue>): CursorState {
  const state: CursorState = { key: item.key?.S ?? "", recent: decodeRecent(item.recent?.S ?? "") };
  if (item.cursor?.N !== undefined) state.cursor = item.cursor.N;
  for (const field of ["since", "name", "guildId", "resume", "archivedBefore"] as const) {
    if (item[field]?.S !== undefined) state[field] = item[field].S;
  }
  for (const field of ["type", "metaAt", "archivedAt", "archivedTop"] as const) {
    if (item[field]?.N !== undefined) state[field] = Number(item[field].N);
  }
  return state;
}

/**
 * `recent` as the first id and then each next one's difference from the one before, in base 36,
 * comma-separated: ids a minute apart differ by about 2.5e11, eight characters instead of
 * nineteen, so the 200 ids of the default window take about 2 KB, 2 write units per advance.
 */
export function encodeRecent(ids: readonly string[]): string {
  let previous = 0n;
  return ids
    .map((id) => {
      const value = BigInt(id);
      const delta = value - previous;
      previous = value;
      return delta.toString(36);
    })
    .join(",");
}

export function decodeRecent(text: string): string[] {
  if (text === "") return [];
  let value = 0n;
  return text.split(",").map((part) => {
    const negative = part.startsWith("-");
    let delta = 0n;
    for (const char of negative ? part.slice(1) : part)
      delta = delta * 36n + BigInt(parseInt(char, 36));
    value += negative ? -delta : delta;
    return value.toString();
  });
}
