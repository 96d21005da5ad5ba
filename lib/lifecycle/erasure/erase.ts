/**
 * Erasing a person (`eraseUser`): every message they wrote, found through the history store's
 * author index, is deleted as an edit-and-delete path deletes it (`Editor.change`), what was
 * derived from it is redacted (`KnowledgeRedactor`), and their name is removed from the results
 * that still hold it (`./scrub.ts`). Page by page, under an audit item (`./audit.ts`) that says
 * which page is in flight: a run that stops anywhere is resumed by the next one, which redoes
 * that page whole (every step is idempotent) and goes on from the page's cursor.
 */
import { type AuthorRef, authorMatches, mentions } from "../../history/changes/index.js";
import type { Message } from "../../history/index.js";
import { authorKeyOf, authorRefKey } from "../../history/schema/index.js";
import { namesTerm } from "../../knowledge/extraction/offline/index.js";
import { type ErasurePath, KINDS } from "../../knowledge/index.js";
import { forgetCorrector } from "../../knowledge/write/index.js";
import {
  type AuditStore,
  auditKeyOf,
  type ErasedMessage,
  type ErasureAudit,
  type ErasureCounts,
  MIN_AUDIT_SECRET_CHARS,
  NO_COUNTS,
} from "./audit.js";
import type { ErasureDependencies, ErasureMessages } from "./dependencies.js";
import { DigestEraser } from "./digests.js";
import { ErasureError, ErasureRequestError, ErasureScopeError } from "./errors.js";
import { type ScrubStore, scrubResults } from "./scrub.js";

/**
 * Whom to erase: `userId`, their stable platform id (what a message carries when its importer or
 * connector knows it), and or `user`, the stored display name (`author`) of their messages that
 * have no `userId`. A message with a `userId` is found only by it: a display name is not unique
 * and changes, so `user` alone leaves the messages stored with an id (give both for a person
 * whose older messages were stored without one).
 */
export interface EraseRequest {
  userId?: string;
  user?: string;
  /** Only these channels (default: every one). */
  channels?: readonly string[];
  /**
   * Every channel, said: needed by an erasure by `user` alone without `channels`, which is
   * otherwise refused with an {@link ErasureScopeError} naming the channels it would touch.
   */
  allChannels?: boolean;
  /** Who asked: an operator's name or ticket, kept in the audit item. */
  requestedBy: string;
  /** Count what would be erased, change nothing (no audit item either). */
  dryRun?: boolean;
}

export interface EraseOutcome {
  /** False when the run stopped early (`shouldStop`): run it again to finish. */
  done: boolean;
  dryRun: boolean;
  counts: ErasureCounts;
  /** Messages per channel: with `dryRun`, what would be deleted. */
  byChannel?: Record<string, number>;
  /** The audit item as the run left it (absent for a dry run). */
  audit?: ErasureAudit;
}

const MAX_PAGE = 100;

/** Erases (or with `dryRun` counts) a person's messages and what was derived from them. */
export async function eraseUser(
  deps: ErasureDependencies,
  request: EraseRequest,
): Promise<EraseOutcome> {
  const { user, userId, requestedBy } = request;
  if (user === undefined && userId === undefined) {
    throw new ErasureRequestError("user", "give the person's userId, their stored name, or both");
  }
  if (user !== undefined && (typeof user !== "string" || user === "")) {
    throw new ErasureRequestError("user", "expected the stored author name, a non-empty string");
  }
  if (userId !== undefined && (typeof userId !== "string" || userId === "")) {
    throw new ErasureRequestError("userId", "expected the platform user id, a non-empty string");
  }
  if (typeof requestedBy !== "string" || requestedBy.trim() === "") {
    throw new ErasureRequestError("requestedBy", "say who asked for the erasure");
  }
  const channels = request.channels === undefined ? null : [...new Set(request.channels)].sort();
  if (channels?.length === 0) {
    throw new ErasureRequestError("channels", "give at least one channel, or none for every one");
  }
  if (channels !== null && request.allChannels) {
    throw new ErasureRequestError("allChannels", "give channels or all channels, not both");
  }
  const pageSize = deps.pageSize ?? MAX_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) {
    throw new ErasureRequestError("pageSize", `expected a whole number from 1 to ${MAX_PAGE}`);
  }
  const refs: AuthorRef[] = [];
  if (userId !== undefined) refs.push({ userId });
  if (user !== undefined) refs.push({ user });
  const scope: Scope = { refs, channels, pageSize };
  if (request.dryRun) return countOnly(deps, scope);
  if (userId === undefined && channels === null && !request.allChannels) {
    const found = await countOnly(deps, scope);
    if (found.counts.messages > 0) throw new ErasureScopeError(found.byChannel ?? {});
  }

  const now = deps.now ?? Date.now;
  if (typeof deps.auditSecret !== "string" || deps.auditSecret.length < MIN_AUDIT_SECRET_CHARS) {
    throw new ErasureError(
      "ERASURE_NO_AUDIT_SECRET",
      `the audit secret must be at least ${MIN_AUDIT_SECRET_CHARS} characters (the stack's AuditKeySecretArn, or a workspace's own): the audit item's keys are hashed with it`,
    );
  }
  // The audit is filed under the stable id when there is one; a name erased with it is kept too.
  const authorKey = auditKeyOf(deps.auditSecret, authorRefKey(refs[0]));
  const nameKey =
    userId !== undefined && user !== undefined
      ? auditKeyOf(deps.auditSecret, authorKeyOf(user))
      : undefined;
  const sameScope = (a: ErasureAudit) =>
    JSON.stringify(a.channels) === JSON.stringify(channels) && a.nameKey === nameKey;
  let audit = await deps.audits.unfinished(authorKey);
  if (audit !== undefined && !sameScope(audit)) {
    throw new ErasureError(
      "ERASURE_IN_PROGRESS",
      `an erasure of this person ${audit.channels === null ? "in every channel" : `in ${audit.channels.join(", ")}`}${audit.nameKey === undefined ? "" : " (with a stored name)"}, asked for at ${audit.requestedAt}, is unfinished: run it again with the same channels and names to finish it first`,
    );
  }
  if (audit === undefined) {
    // Nothing left of them, and an erasure of the same scope finished: a repeat (or a run again
    // after a crash right after it finished) answers with it and writes nothing.
    const first = await readPage(deps.messages, scope, undefined);
    const finished = (await deps.audits.list(authorKey)).filter(sameScope).at(-1);
    if (first.messages.length === 0 && first.cursor === undefined && finished !== undefined) {
      return { done: true, dryRun: false, counts: { ...NO_COUNTS }, audit: finished };
    }
  }
  audit =
    audit === undefined
      ? {
          v: 1,
          authorKey,
          ...(nameKey === undefined ? {} : { nameKey }),
          channels,
          requestedBy,
          requestedAt: new Date(now()).toISOString(),
          state: "started",
          runs: 1,
          counts: { ...NO_COUNTS },
          batch: [],
          exhausted: false,
          version: 1,
        }
      : { ...audit, runs: audit.runs + 1, version: audit.version + 1 };
  await save(deps.audits, audit);

  const done = new Set<string>();
  // Read once per run: the digests' JSON, matched against each page.
  const digests = deps.digests === undefined ? undefined : new DigestEraser(deps.digests);
  for (;;) {
    if (deps.shouldStop?.()) return { done: false, dryRun: false, counts: audit.counts, audit };
    const counts = { ...audit.counts };
    add(counts, await eraseBatch(deps, refs, audit.batch, done, digests));
    counts.messages += audit.batch.length;
    if (audit.exhausted) {
      await forgetCorrections(deps, scope.channels, refs);
      audit = {
        ...audit,
        counts,
        batch: [],
        state: "finished",
        finishedAt: new Date(now()).toISOString(),
        version: audit.version + 1,
      };
      await save(deps.audits, audit);
      return { done: true, dryRun: false, counts, audit };
    }
    const page = await readPage(deps.messages, scope, audit.cursor);
    const next: ErasureAudit = {
      ...audit,
      counts,
      batch: page.messages,
      exhausted: page.cursor === undefined,
      version: audit.version + 1,
    };
    if (page.cursor === undefined) delete next.cursor;
    else next.cursor = page.cursor;
    await save(deps.audits, next);
    audit = next;
  }
}

async function save(audits: AuditStore, audit: ErasureAudit): Promise<void> {
  if (!(await audits.save(audit))) {
    throw new ErasureError(
      "ERASURE_CONCURRENT_RUN",
      `another run of this erasure (asked for at ${audit.requestedAt}) wrote its audit item first: let one run at a time`,
    );
  }
}

interface Scope {
  refs: AuthorRef[];
  channels: string[] | null;
  pageSize: number;
}

/**
 * One page of the person's messages, as the author index lists them with their times (so no
 * message is read to find its results). The index names them by a 128-bit hash of the name;
 * being eventually consistent, it may still list one deleted a moment ago, which the deletion
 * then finds deleted (counted all the same). A message without a time is read, to check it.
 */
async function readPage(
  messages: ErasureMessages,
  scope: Scope,
  cursor: string | undefined,
): Promise<{ messages: ErasedMessage[]; cursor?: string }> {
  const page = await messages.authorMessages(scope.refs, {
    limit: scope.pageSize,
    ...(scope.channels === null ? {} : { channels: scope.channels }),
    ...(cursor === undefined ? {} : { cursor }),
  });
  const found: ErasedMessage[] = [];
  const untimed = page.messages.filter((m) => m.ts === undefined);
  for (const m of page.messages) {
    if (m.ts !== undefined) found.push({ channel: m.conversationId, id: m.id, ts: m.ts });
  }
  const groups = byChannel(untimed.map((m) => ({ channel: m.conversationId, id: m.id })));
  for (const [channel, ids] of groups) {
    for (const message of await messages.getMessages(channel, ids)) {
      if (message.deleted || message.id === undefined) continue;
      if (!scope.refs.some((ref) => authorMatches(message, ref))) continue;
      found.push({ channel, id: message.id, ts: message.ts ?? 0 });
    }
  }
  return page.cursor === undefined ? { messages: found } : { messages: found, cursor: page.cursor };
}

/**
 * Per channel: deletes the page's messages, redacts what was derived from them, removes the
 * person's names from the results that hold the page's times (and once per run from every
 * result of the channel that names them) and from the channel's name, and asks the tick to reset
 * the channel's reply linker; every step is a no-op when redone (but the last, which is
 * harmless). Erasing by `userId`, the names are the display names the messages themselves carry
 * (results hold names, never user ids), which their deletion removes: those are learned and
 * removed first, so that a page redone after its deletions has only names already removed left
 * to learn; so is the channel's name they carry. A name given (`user`) is removed last, after
 * the redaction has recounted the author lists it could, as it always was: most results then
 * need no second write. `done` holds the once-per-run steps this run made.
 */
async function eraseBatch(
  deps: ErasureDependencies,
  refs: readonly AuthorRef[],
  batch: readonly ErasedMessage[],
  done: Set<string>,
  digests: DigestEraser | undefined,
): Promise<Omit<ErasureCounts, "messages">> {
  const counts = { ...NO_COUNTS };
  const given = refs.flatMap((ref) => (ref.user === undefined ? [] : [ref.user]));
  const userIds = refs.flatMap((ref) => (ref.userId === undefined ? [] : [ref.userId]));
  const once = async (step: string, channel: string, name: string, run: () => Promise<void>) => {
    const key = JSON.stringify([step, channel, name]);
    if (done.has(key)) return;
    await run();
    done.add(key);
  };
  for (const [channel, ids] of byChannel(batch)) {
    const held = batch.filter((m) => m.channel === channel);
    const times = held.map((m) => m.ts);
    // Read before their deletion takes their names and their channel's name with it: by id
    // each (it carries its author's name), by name one (for the channel's name).
    const read = refs.some((ref) => ref.userId !== undefined) ? ids : ids.slice(0, 1);
    const stored = (await deps.messages.getMessages(channel, read)).filter((m) => !m.deleted);
    const carried = carriedNames(stored, refs).filter((name) => !given.includes(name));
    const scrubChannel = async (names: readonly string[]) => {
      for (const name of names) {
        await once("results", channel, name, async () => {
          const scrubbed: Partial<ErasureCounts> = await scrubResults(deps.results, channel, [
            name,
          ]);
          add(counts, scrubbed);
        });
      }
    };
    await eraseNames(deps, channel, carried, times, userIds, counts);
    await scrubChannel(carried);
    for (const name of namedChannel(stored, [...carried, ...given])) {
      // The page's own messages keep it until deleted, so that a page redone learns it again.
      await once("channel name", channel, name, async () => {
        await deps.channelNames.clearChannelName(channel, name, ids);
      });
    }
    for (const id of ids) await deps.messages.change(channel, { kind: "delete", id });
    const redacted = await deps.redactor.redact(
      channel,
      held.map((m) => ({ id: m.id, ts: m.ts, kind: "delete" as const })),
    );
    add(counts, redacted);
    await eraseNames(deps, channel, given, times, userIds, counts);
    await scrubChannel(given);
    // After the deletions: a tick that read the messages before them is followed by one that
    // drops what it linked (a page redone asks again, which costs one more empty window).
    const at = (deps.now ?? Date.now)();
    await deps.channels?.requestLinkerReset(channel, at, at);
    await digests?.erase(ids, [...carried, ...given]);
    await deps.search?.erased(channel, ids, [...carried, ...given, ...userIds]);
  }
  const { messages: _, ...derived } = counts;
  return derived;
}

/**
 * The person as corrector, in every channel of the erasure's scope (every listed one by
 * default), where they wrote or not: a correction they made (`by` their user id or the name
 * given) is kept without it. After the pages, so that a run stopped before is redone whole by
 * the next; a channel's corrections are one Query of its `correction#` items, and few.
 */
async function forgetCorrections(
  deps: ErasureDependencies,
  channels: readonly string[] | null,
  refs: readonly AuthorRef[],
): Promise<void> {
  const identities = refs.flatMap((ref) => [ref.userId ?? [], ref.user ?? []].flat());
  for (const channel of channels ?? (await deps.messages.conversations())) {
    await forgetCorrector(deps.results, channel, identities);
  }
}

/** Erasing by `userId`: the `author` of each of the page's `stored` messages with that id. */
function carriedNames(stored: readonly Message[], refs: readonly AuthorRef[]): string[] {
  const byId = refs.filter((ref) => ref.userId !== undefined);
  const names = new Set<string>();
  for (const message of stored) {
    if (message.author !== undefined && byId.some((ref) => authorMatches(message, ref))) {
      names.add(message.author);
    }
  }
  return [...names];
}

/** The channel names the page's `stored` messages carry that name one of `names`. */
function namedChannel(stored: readonly Message[], names: readonly string[]): Set<string> {
  const channelNames = stored.flatMap(({ channelName }) => channelName ?? []);
  return new Set(channelNames.filter((c) => names.some((name) => mentions(c, name))));
}

/** A dry run: the person's messages per channel, nothing written. */
async function countOnly(deps: ErasureDependencies, scope: Scope): Promise<EraseOutcome> {
  const perChannel: Record<string, number> = {};
  let cursor: string | undefined;
  let messages = 0;
  do {
    const page = await readPage(deps.messages, scope, cursor);
    for (const m of page.messages) perChannel[m.channel] = (perChannel[m.channel] ?? 0) + 1;
    messages += page.messages.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return { done: true, dryRun: true, counts: { ...NO_COUNTS, messages }, byChannel: perChannel };
}

/** Ids grouped by channel, channels in order of first appearance. */
function byChannel(messages: readonly { channel: string; id: string }[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { channel, id } of messages) {
    const ids = groups.get(channel);
    if (ids === undefined) groups.set(channel, [id]);
    else ids.push(id);
  }
  return groups;
}

/** Adds what the audit counts of `counts` (a redaction's re-extractions are not its). */
function add(total: ErasureCounts, counts: Partial<Record<string, number>>): void {
  for (const key of Object.keys(total) as (keyof ErasureCounts)[]) total[key] += counts[key] ?? 0;
}

/**
 * What each erasure path of the registry (`lib/knowledge/kinds.ts`) does with the person's
 * names in a channel whose results hold their messages at `times`.
 */
const NAME_STEPS: Record<
  ErasurePath,
  (
    results: ScrubStore,
    channel: string,
    names: readonly string[],
    times: readonly number[],
    userIds: readonly string[],
  ) => Promise<Partial<ErasureCounts>>
> = {
  "names scrubbed": (results, channel, names, times) =>
    scrubResults(results, channel, names, times),
  "name terms removed": async (results, channel, names) => {
    if (names.length === 0) return { nameTermsRemoved: 0 };
    // The extractor's own forms of a name (`@alice zorbington`, the stems `alic zorbington`),
    // and the name as a word of any other term (`alice/dotfiles`).
    const named = namesTerm(names);
    return {
      nameTermsRemoved: await results.removeTerms(
        channel,
        (term) => named(term) || names.some((name) => mentions(term, name)),
      ),
    };
  },
  // By their user id (what a platform's correction keeps) or a name of theirs (an operator's).
  "corrector forgotten": async (results, channel, names, _times, userIds) => {
    await forgetCorrector(results, channel, [...names, ...userIds]);
    return {};
  },
  // The derived indexes' writer (`deps.search`), once the page's deletions are redacted.
  "index purged": async () => ({}),
  "nothing to erase": async () => ({}),
};

/** The registry's erasure paths, each once. */
const NAME_PATHS = [...new Set(KINDS.map((kind) => kind.erase))];

async function eraseNames(
  deps: ErasureDependencies,
  channel: string,
  names: readonly string[],
  times: readonly number[],
  userIds: readonly string[],
  counts: ErasureCounts,
): Promise<void> {
  for (const path of NAME_PATHS)
    add(counts, await NAME_STEPS[path](deps.results, channel, names, times, userIds));
}
