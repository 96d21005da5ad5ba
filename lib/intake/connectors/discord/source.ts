/**
 * One polled source (a channel, or a thread of one): its new messages read forward from the
 * cursor, 100 at a time, sorted oldest first and ingested page by page, the cursor moved after
 * each page is stored; then the re-read window, which turns edits and disappearances into edit
 * and delete lines.
 */
import { type Message, messageText as storedText } from "../../../history/index.js";
import type { ChatChangeInput, ChatMessageInput, IngestResult } from "../../ingest/index.js";
import type { CursorState, CursorStore } from "./cursors.js";
import { chatMessage, type Destination, type DiscordMessage, messageText } from "./map.js";
import type { DiscordRest } from "./rest.js";
import { compareSnowflakes } from "./snowflake.js";

const PAGE_LIMIT = 100;
const MESSAGES_ROUTE = "/channels/{id}/messages";

/** Where lines go: `IngestClient` (or `ingest` over a store in tests). */
export interface MessageSink {
  ingest(lines: readonly (ChatMessageInput | ChatChangeInput)[]): Promise<IngestResult>;
}

/** What the re-read compares against: the history store's messages by id (deleted ones flagged). */
interface StoredMessages {
  getMessages(channel: string, ids: readonly string[]): Promise<Message[]>;
}

export interface SourceTally {
  ingested: number;
  unchanged: number;
  rejected: number;
  failed: number;
  edits: number;
  deletions: number;
  /** Messages with no content and no attachment: a sign the MESSAGE_CONTENT intent is missing. */
  empty: number;
}

export function emptyTally(): SourceTally {
  return { ingested: 0, unchanged: 0, rejected: 0, failed: 0, edits: 0, deletions: 0, empty: 0 };
}

export interface SourceDeps {
  rest: DiscordRest;
  cursors: CursorStore;
  sink: MessageSink;
  store: StoredMessages;
}

const byId = (a: DiscordMessage, b: DiscordMessage) => compareSnowflakes(a.id, b.id);

/** The ids kept in `recent`: the latest `window`, oldest first. */
function keepRecent(ids: readonly string[], window: number): string[] {
  const unique = [...new Set(ids)].sort(compareSnowflakes);
  return window > 0 ? unique.slice(-window) : [];
}

/**
 * Reads `key`'s messages after its cursor (else after `start`) until a short page, ingesting
 * each page before moving the cursor past it. A page the store did not wholly confirm moves the
 * cursor only up to its last message before the first failure, and stops this source: the rest
 * is read again next run (ids deduplicate).
 */
export async function pollForward(
  deps: SourceDeps,
  key: string,
  to: Destination,
  state: CursorState,
  start: string,
  window: number,
  tally: SourceTally,
): Promise<void> {
  let after = state.cursor ?? start;
  for (;;) {
    const page = await deps.rest.get<DiscordMessage[]>(
      MESSAGES_ROUTE,
      key,
      `/channels/${key}/messages`,
      { after, limit: String(PAGE_LIMIT) },
    );
    if (!Array.isArray(page) || page.length === 0) return;
    // Discord answers newest first; ingestion's positions should follow the conversation.
    const sorted = [...page].sort(byId);
    const lines: ChatMessageInput[] = [];
    const lineIds: string[] = [];
    for (const message of sorted) {
      const line = chatMessage(message, to);
      if (line === undefined) continue;
      // System lines (joins, pins) have no content of their own: only people's messages count.
      if (line.kind === "user" && line.text === "") tally.empty += 1;
      lines.push(line);
      lineIds.push(message.id);
    }
    let cursor = sorted[sorted.length - 1].id;
    let stop = false;
    if (lines.length > 0) {
      const result = await deps.sink.ingest(lines);
      tally.ingested += result.stored.length;
      tally.unchanged += result.unchanged.length + result.conflicts.length + result.deleted.length;
      tally.rejected += result.rejected.length;
      tally.failed += result.failed.length;
      if (result.failed.length > 0) {
        const first = Math.min(...result.failed.map((failure) => failure.index));
        stop = true;
        const lastGood = first === 0 ? undefined : lineIds[first - 1];
        if (lastGood === undefined) return;
        cursor = lastGood;
      }
    }
    const stored = stop ? lineIds.filter((id) => compareSnowflakes(id, cursor) <= 0) : lineIds;
    const recent = keepRecent([...state.recent, ...stored], window);
    await deps.cursors.advance(key, cursor, { recent });
    state.cursor = cursor;
    state.recent = recent;
    after = cursor;
    if (stop || page.length < PAGE_LIMIT) return;
  }
}

/**
 * The re-read window: the latest `window` messages as Discord has them now, against the store.
 * A message with an `edited_timestamp` whose text differs from the stored one becomes an edit
 * line; an id of `recent` inside the window's span that Discord no longer returns becomes a
 * delete line (when the store still has it undeleted). Newer messages than the cursor are left
 * to the next forward read.
 */
export async function reread(
  deps: SourceDeps,
  key: string,
  to: Destination,
  state: CursorState,
  window: number,
  tally: SourceTally,
): Promise<void> {
  const cursor = state.cursor;
  if (window <= 0 || cursor === undefined || state.recent.length === 0) return;
  const fetched: DiscordMessage[] = [];
  let before: string | undefined;
  let reachedStart = false;
  while (fetched.length < window) {
    const limit = Math.min(PAGE_LIMIT, window - fetched.length);
    const page = await deps.rest.get<DiscordMessage[]>(
      MESSAGES_ROUTE,
      key,
      `/channels/${key}/messages`,
      { before, limit: String(limit) },
    );
    if (!Array.isArray(page)) return;
    fetched.push(...page);
    if (page.length < limit) {
      reachedStart = true;
      break;
    }
    before = [...page].sort(byId)[0].id;
  }
  const seen = new Set(fetched.map((message) => message.id));
  const low = reachedStart || fetched.length === 0 ? "0" : [...fetched].sort(byId)[0].id;
  const gone = state.recent.filter(
    (id) => !seen.has(id) && compareSnowflakes(id, low) >= 0 && compareSnowflakes(id, cursor) <= 0,
  );
  const edited = fetched.filter(
    (message) => message.edited_timestamp && compareSnowflakes(message.id, cursor) <= 0,
  );
  if (gone.length === 0 && edited.length === 0) return;
  const stored = new Map(
    (await deps.store.getMessages(to.channel, [...edited.map((m) => m.id), ...gone])).map((m) => [
      m.id,
      m,
    ]),
  );
  const changes: ChatChangeInput[] = [];
  for (const message of edited) {
    const had = stored.get(message.id);
    const text = messageText(message);
    if (had === undefined || had.deleted || storedText(had) === text) continue;
    changes.push({
      op: "edit",
      id: message.id,
      channel: to.channel,
      text,
      editedAt: message.edited_timestamp as string,
    });
  }
  for (const id of gone) {
    const had = stored.get(id);
    if (had !== undefined && !had.deleted) changes.push({ op: "delete", id, channel: to.channel });
  }
  // A deletion the store did not confirm stays in `recent`, to be tried again next run.
  const retry = new Set<string>();
  if (changes.length > 0) {
    const result = await deps.sink.ingest(changes);
    tally.failed += result.failed.length;
    for (const failure of result.failed) retry.add(String(changes[failure.index].id));
    // A change the store answered is counted when applied; one a queue took (no answer yet) too.
    const answered = new Map(result.changes.map((change) => [change.index, change.status]));
    changes.forEach((change, index) => {
      if (retry.has(String(change.id))) return;
      const status = answered.get(index);
      if (status !== undefined && status !== "applied") return;
      if (change.op === "edit") tally.edits += 1;
      else tally.deletions += 1;
    });
  }
  const forgotten = new Set(gone.filter((id) => !retry.has(id)));
  state.recent = state.recent.filter((id) => !forgotten.has(id));
  await deps.cursors.update(key, { recent: state.recent });
}
