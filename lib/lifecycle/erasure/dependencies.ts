/** What an erasure reads and writes: the stores, the audit, and what else holds the person. */
import type { AuthorIndex, ChannelNames, Editor } from "../../history/changes/index.js";
import type { ConversationId, Lister, Message } from "../../history/index.js";
import type { KnowledgeRedactor, KnowledgeRedactorOptions } from "../../knowledge/write/index.js";
import type { ChannelStore } from "../../segmentation/pipeline/store/index.js";
import type { AuditStore } from "./audit.js";
import type { DigestArchive } from "./digests.js";
import type { ScrubStore } from "./scrub.js";

/**
 * The history store's side: finding the person's messages, checking and deleting them, and
 * listing the channels (whose corrections are looked through for the person as corrector).
 */
export type ErasureMessages = AuthorIndex &
  Pick<Editor, "change"> &
  Pick<Lister, "conversations"> & {
    getMessages(conversationId: ConversationId, ids: readonly string[]): Promise<Message[]>;
  };

export interface ErasureDependencies {
  messages: ErasureMessages;
  /** Redacts the results, topic entries and window replies of deleted messages. */
  redactor: Pick<KnowledgeRedactor, "redact">;
  /** The results store, for the names a redaction leaves (`./scrub.ts`, the term statistics). */
  results: ScrubStore;
  /**
   * The messages table's channel names: a channel named after the person (a private chat is
   * named after the one it is with) loses its name from every message.
   */
  channelNames: ChannelNames;
  audits: AuditStore;
  /**
   * The deployment's secret the audit item's keys are hashed with ({@link auditKeyOf}): the item
   * outlives the erasure, and its keys must not be found again by hashing a list of names.
   */
  auditSecret: string;
  /**
   * The channels table (the segmentation tick's): in each channel where a page deleted the
   * person's messages, the tick is asked to drop its reply linker's window, which holds hashes
   * of their words and names (`ChannelStore.requestLinkerReset`). Absent: no tick keeps state
   * for these messages (tests of the results alone).
   */
  channels?: Pick<ChannelStore, "requestLinkerReset">;
  /**
   * The scheduled digest's stored files (`./digests.ts`): a period that cites the person's
   * messages or names them loses every version of its files. Absent: no digest is stored.
   */
  digests?: DigestArchive;
  /**
   * The search index (convoseg/search's `SearchIndexer`): in each channel where a page deleted
   * the person's messages, what cites them, what they wrote and what names them goes, older
   * versions included. Absent: no index is kept. Its redactions come by the redactor's
   * `onRedacted`, which the wiring gives it.
   */
  search?: ErasureSearch;
  /** The clock (default: the wall clock). */
  now?: () => number;
  /** Asked before each page: true stops the run there (`done: false`), to be resumed. */
  shouldStop?: () => boolean;
  /** Messages per page (default 100): what one audit write covers. */
  pageSize?: number;
}

/** The search index's part of an erasure. */
interface ErasureSearch {
  erased(channel: string, messageIds: readonly string[], names: readonly string[]): Promise<void>;
  redacted: NonNullable<KnowledgeRedactorOptions["onRedacted"]>;
}
