import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../../history/dynamodb/index.js";
import type { ChangeListener } from "./changes.js";
import { ChannelPositions } from "./channel-positions.js";
import type { ProducerGrant } from "./grants.js";
import {
  type ChatChangeInput,
  type ChatMessageInput,
  type IngestResult,
  ingest,
} from "./ingest.js";

export interface IngestClientOptions {
  messagesTable: string;
  channelsTable: string;
  client?: DynamoDBClient;
  /** The pipeline clock that due times are in (default: the wall clock). */
  now?: () => number;
  /** The deployment's `dueShards` (default 4): the due index shard count the tick reads. */
  dueShards?: number;
  /**
   * The deployment's `messageRetentionDays`: each message stored expires (DynamoDB TTL) this many
   * days after its platform time. Default: kept until deleted.
   */
  messageRetentionDays?: number;
  /**
   * The deployment's `changeHoldHours`: how long an edit or deletion of a message not stored
   * yet is held, to apply to it if it arrives meanwhile (default 24).
   */
  changeHoldHours?: number;
  /** Told of each channel's applied edits and deletions (see `IngestOptions.onChanged`). */
  onChanged?: ChangeListener;
}

/**
 * The typed client for users' own ingestion Lambdas (a Discord bot, a Slack events handler):
 * writes chat messages, and their edits and deletions, into convoseg's messages table through the
 * history store, at positions reserved on the channels table, so the next segmentation tick reads
 * them.
 *
 * ```ts
 * const ingestion = new IngestClient({
 *   messagesTable: process.env.MESSAGES_TABLE!,
 *   channelsTable: process.env.CHANNELS_TABLE!,
 * });
 * const { rejected, conflicts, failed } = await ingestion.ingest([{ id, ts, channel, user, text }]);
 * await ingestion.ingest([{ op: "edit", id, channel, text, editedAt }, { op: "delete", id, channel }]);
 * ```
 */
export class IngestClient {
  private readonly store: DynamoDbStore;
  private readonly onChanged?: ChangeListener;

  constructor(options: IngestClientOptions) {
    const client = options.client ?? new DynamoDBClient({});
    this.store = new DynamoDbStore({
      client,
      tableName: options.messagesTable,
      retentionDays: options.messageRetentionDays,
      changeHoldHours: options.changeHoldHours,
      positions: new ChannelPositions({
        client,
        tableName: options.channelsTable,
        now: options.now,
        dueShards: options.dueShards,
      }),
    });
    this.onChanged = options.onChanged;
  }

  ingest(
    messages: readonly (ChatMessageInput | ChatChangeInput)[] | readonly unknown[],
    options?: { signal?: AbortSignal; grant?: ProducerGrant },
  ): Promise<IngestResult> {
    return ingest(this.store, messages, { ...options, onChanged: this.onChanged });
  }
}
