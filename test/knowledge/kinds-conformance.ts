/**
 * The registry of knowledge kinds (`KINDS`), checked on a deployment's stores (memory in the
 * unit tier, DynamoDB Local in the emulator tier): a person with a name of two words writes in
 * three channels, one extracted by a model (results, topic and question entries, window
 * replies), one by the offline extractor (term statistics), where someone else names them, and
 * a private chat named after them (`channelName`, as Telegram names one); they correct a
 * question of the first, marking it answered by a message of theirs, and one of a fourth channel
 * where they never wrote; a failed attempt leaves a
 * lease, extraction spends tokens. Then the person is erased through the real erasure,
 * and every item of every table the kinds declare is read back. For every registered kind: its
 * items were there, the personal ones held the person, and after the erasure nothing of their
 * name, user id, message ids or words is left; a kind that declares nothing personal never held
 * any. Every item read is of a registered kind, so a kind stored without being registered fails
 * here too. Then every item of every table (the messages table, the results table and, on a
 * workspace's tables, the ledger of delivered bodies, erased as `erase` erases it) is scanned
 * for their name, as a word in any case, with or without `@` and as the offline extractor keys
 * it, and for the words only they wrote: only their deleted messages' ids and times may stay.
 *
 * Retention is checked the same way, from each kind's declaration and not by naming kinds: the
 * deployment has a result retention (so its results expire), and before and after the erasure
 * every item's TTL attribute (`expiresAt`, epoch seconds; the memory stores keep it as the table
 * does) must be what its kind's `retention` says: `with its result`, the expiry of the result its
 * kind's `resultOf` names; `own expiry`, one of its own; `kept`, none.
 *
 * A kind kept in a derived index of its own (`storage.index`: search) is run through the harness
 * `./derived-indexes.ts` wires for it, where the fixture runs them (`derivedIndexes`: the
 * emulator tier, on LanceDB in a directory): told every result stored, every segment redacted
 * and the erasure, as the deployment tells it. Its documents are checked as the table's items
 * are, and besides: no query finds the person's words or id, no file of it holds them; a
 * message's edit and deletion are followed; `channel delete` leaves nothing of the channel; a
 * document past retention is not found, and the channel's next write removes it.
 */

import { buildDigest, digestJson, digestMarkdown, storeDigestSources } from "convoseg/digest";
import type { AuditStore, EraseRequest, ErasureMessages } from "convoseg/erasure";
import { eraseUser, type MemoryDigestArchive } from "convoseg/erasure";
import type { Extractor } from "convoseg/extraction";
import { Analyzer } from "convoseg/extraction";
import { KEYPHRASE_VOCABULARY, KeyphraseExtractor } from "convoseg/extraction/offline";
import { type Message, type Store, textMessage } from "convoseg/history";
import type { ChannelNames } from "convoseg/history/changes";
import { inResultsTable, KINDS, type KnowledgeKind, kindOf } from "convoseg/knowledge";
import type { ResultStore, SegmentResult, SpendCounter } from "convoseg/knowledge/store";
import {
  DEPLOYMENT_PARTITION,
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
  resultItemKey,
} from "convoseg/knowledge/store/schema";
import {
  correctQuestion,
  KnowledgeRedactor,
  promptVersionOf,
  SegmentExtractor,
  storedMessageStates,
} from "convoseg/knowledge/write";
import { segmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it, onTestFinished } from "vitest";
import type { SegmentLedger } from "../../local/ledger.js";
import { DERIVED_INDEXES, type DerivedIndex } from "./derived-indexes.js";
import { ANALYSIS } from "./fixtures.js";
import { NOW, questionModel, segmentAt } from "./redaction.js";

/** A deployment's stores, and every item its tables hold (what a Scan of each reads). */
export interface KindsFixture {
  history: Store & ErasureMessages;
  channelNames: ChannelNames;
  results: ResultStore;
  spend: SpendCounter;
  audits: AuditStore;
  /** The results table's items. */
  items(): Promise<Record<string, unknown>[]>;
  /** The messages table's items; `written`: the ids written, by channel (a store with no Scan). */
  messageItems(written: ReadonlyMap<string, readonly string[]>): Promise<Record<string, unknown>[]>;
  /** A workspace's ledger of delivered bodies, where the tables have one. */
  ledger?: SegmentLedger;
  /** The scheduled digests' stored versions, written by {@link writeDigests}. */
  digests: MemoryDigestArchive;
  /** Removes what DynamoDB's TTL would by `epochSeconds`, where the store can. */
  expire?(epochSeconds: number): Promise<void>;
  /**
   * Runs the registry's derived indexes (`./derived-indexes.ts`); absent, their kinds are not
   * checked on these stores (the memory stores': LanceDB runs in the emulator tier).
   */
  derivedIndexes?: true;
}

/** The registry's kinds kept in a derived index of their own. */
const INDEX_KINDS: readonly KnowledgeKind[] = KINDS.filter((kind) => !inResultsTable(kind));

/** The fixture's derived indexes, one per index kind, and the clock their retention reads. */
interface Indexes {
  each: Map<KnowledgeKind, DerivedIndex>;
  clock: { now: number };
}

async function openIndexes(fixture: KindsFixture): Promise<Indexes> {
  const clock = { now: NOW };
  const each = new Map<KnowledgeKind, DerivedIndex>();
  if (fixture.derivedIndexes === undefined) return { each, clock };
  for (const kind of INDEX_KINDS) {
    const name = (kind.storage as { index: string }).index;
    const harness = (DERIVED_INDEXES as Record<string, (typeof DERIVED_INDEXES)["search"]>)[name];
    expect(harness, `${kind.name}: no harness wires index ${name}`).toBeDefined();
    each.set(
      kind,
      await harness({
        results: fixture.results,
        history: fixture.history,
        now: () => clock.now,
        retentionMs: RESULT_RETENTION_MS,
      }),
    );
  }
  return { each, clock };
}

/** Tells every index: what the consumer, the redactor and the erasure tell the deployed one. */
function allIndexes(indexes: Indexes) {
  const each = () => [...indexes.each.values()];
  return {
    stored: async (result: SegmentResult) => {
      for (const index of each()) await index.stored(result);
    },
    redacted: async (...args: Parameters<DerivedIndex["redacted"]>) => {
      for (const index of each()) await index.redacted(...args);
    },
    erased: async (...args: Parameters<DerivedIndex["erased"]>) => {
      for (const index of each()) await index.erased(...args);
    },
  };
}

/**
 * The scheduled digest of the deployment's channels, as the digest function writes it: its JSON
 * and Markdown, twice (the bucket keeps a rerun's replaced version), and a digest of another
 * period that holds nothing of the person, which must stay.
 */
async function writeDigests(
  fixture: KindsFixture,
  written: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  const messages = fixture.history as unknown as Parameters<typeof storeDigestSources>[1];
  const digest = await buildDigest(storeDigestSources(fixture.results, messages), {
    channels: [...written.keys()],
    since: NOW - DAY,
    until: NOW + DAY,
    now: new Date(NOW + DAY),
  });
  for (let run = 0; run < 2; run++) {
    fixture.digests.put("digests/2025-03-03/digest.json", digestJson(digest));
    fixture.digests.put("digests/2025-03-03/digest.md", digestMarkdown(digest));
  }
  fixture.digests.put("digests/2020-01-06/digest.json", JSON.stringify({ topics: [] }));
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The deployment's result retention: results (and what goes with them) do expire. */
const RESULT_RETENTION_MS = 30 * DAY;
const PERSON = { user: "Alice Zorbington", userId: "UZ0RB8" };
/** Words only the person writes (checked by their first six letters, so stems count too). */
const THEIR_WORDS = ["quuxolator", "frobnitz"];
/**
 * Their name as a word in any case, with or without `@`, and as the offline extractor keys the
 * words of a text (`alic zorbington`).
 */
const THEIR_NAME = /(^|[^\p{L}\p{N}_])@?alic(e)?\s+zorbington($|[^\p{L}\p{N}_])/iu;

/** Texts of one segment, by author; the person's are the only ones with their words. */
const LLM_SEGMENT: [string, string][] = [
  ["ann", "my #grub menu is gone"],
  [PERSON.user, "the #quuxolator eats #grub menus, frobnitz it"],
  ["bob", "reinstall #grub from a live usb"],
  [PERSON.user, "anyone around?"],
  ["ann", "my #wifi drops every hour"],
  ["bob", "which #wifi chip is it"],
  [PERSON.user, "an intel one, the quuxolator kind"],
  ["ann", "try the #wifi power save setting"],
];
const OFFLINE_SEGMENT: [string, string][] = [
  ["ann", "the bootloader broke after the kernel update"],
  [PERSON.user, "quuxolator frobnitz bootloader fix: reinstall the quuxolator"],
  ["bob", "reinstall the bootloader from a live usb"],
  [PERSON.user, "frobnitz works, the quuxolator bootloader is back"],
];
/**
 * Another segment of the offline channel: only others, naming the person in two messages, which
 * makes their name a phrase of the statistics (`alic zorbington`).
 */
const NAMED_SEGMENT: [string, string][] = [
  ["ann", `${PERSON.user} knows the bootloader well`],
  ["bob", `ask ${PERSON.user} about the bootloader config`],
  ["ann", "thanks, the bootloader config works"],
];
/** A private chat with the person, named after them as Telegram names one. */
const DM_SEGMENT: [string, string][] = [
  [PERSON.user, "the quuxolator needs a bootloader fix"],
  ["ann", "which bootloader do you run"],
  [PERSON.user, "frobnitz, the quuxolator kind"],
  ["ann", "reinstall the bootloader from a live usb"],
];

/**
 * A channel where the person never wrote, whose question they mark answered all the same: the
 * erasure finds their correction there too.
 */
const OTHERS_SEGMENT: [string, string][] = [
  ["ann", "my #wifi drops at night"],
  ["bob", "which #wifi chip is it"],
  ["ann", "an intel one, from the shop"],
  ["bob", "try the #wifi power save setting"],
];

async function writeAndExtract(
  fixture: KindsFixture,
  indexes: Indexes,
  channel: string,
  segmentId: string,
  lines: readonly [string, string][],
  start: number,
  extractor: Extractor,
  channelName: string,
  written: Map<string, string[]>,
): Promise<string[]> {
  const { segment, messages } = segmentAt(
    channel,
    segmentId,
    lines.map(([, text]) => text),
    start,
  );
  const authored = messages.map((m, i) => ({ ...m, author: lines[i][0], channelName }));
  const stored: Message[] = authored.map((m) =>
    textMessage("user", m.text, {
      id: m.id,
      ts: m.ts,
      author: m.author,
      channelName,
      ...(m.author === PERSON.user ? { userId: PERSON.userId } : {}),
    }),
  );
  await fixture.history.write(channel, stored);
  written.set(channel, [...(written.get(channel) ?? []), ...authored.map((m) => m.id)]);
  // Delivered: a workspace's ledger keeps the body, with its text.
  await fixture.ledger?.record([
    {
      segment: { ...segment, messages: authored.map(({ id, ts }) => ({ id, ts })) },
      body: segmentBody(
        { ...segment, messages: authored.map(({ id, ts }) => ({ id, ts })) },
        stored,
        { maxBodyBytes: 256 * 1024, tableName: "messages" },
      ),
    },
  ]);
  const { result } = await new SegmentExtractor({
    store: fixture.results,
    extractor,
    model: "m",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => NOW,
    owner: () => "owner",
    resultRetentionMs: RESULT_RETENTION_MS,
  }).extract(segment, authored);
  await allIndexes(indexes).stored(result);
  return authored.filter((m) => m.author === PERSON.user).map((m) => m.id);
}

/**
 * The deployment before the erasure; resolves to the ids of the person's messages, and of every
 * message written, by channel.
 */
async function deployment(
  fixture: KindsFixture,
  prefix: string,
  indexes: Indexes,
): Promise<{ ids: string[]; written: Map<string, string[]> }> {
  const llm = new Analyzer(questionModel, { ...ANALYSIS, maxConcurrency: 1 });
  const offline = new KeyphraseExtractor();
  const written = new Map<string, string[]>();
  const ids = [
    ...(await writeAndExtract(
      fixture,
      indexes,
      `${prefix}#model`,
      "m1",
      LLM_SEGMENT,
      NOW,
      llm,
      "general",
      written,
    )),
    ...(await writeAndExtract(
      fixture,
      indexes,
      `${prefix}#offline`,
      "o1",
      OFFLINE_SEGMENT,
      NOW,
      offline,
      "help",
      written,
    )),
    ...(await writeAndExtract(
      fixture,
      indexes,
      `${prefix}#offline`,
      "o2",
      NAMED_SEGMENT,
      NOW + 2 * HOUR,
      offline,
      "help",
      written,
    )),
    ...(await writeAndExtract(
      fixture,
      indexes,
      `${prefix}#dm`,
      "d1",
      DM_SEGMENT,
      NOW,
      offline,
      PERSON.user,
      written,
    )),
  ];
  await writeAndExtract(
    fixture,
    indexes,
    `${prefix}#others`,
    "x1",
    OTHERS_SEGMENT,
    NOW,
    llm,
    "random",
    written,
  );
  const channel = `${prefix}#model`;
  // The person's corrections (by their user id): one naming their answer ("an intel one"), one
  // in the channel where they never wrote.
  for (const [corrected, answerId] of [
    [channel, ids[2]],
    [`${prefix}#others`, "x1-m2"],
  ]) {
    const { entries } = await fixture.results.listQuestions(corrected, { limit: 10 });
    const chip = entries.find((entry) => entry.question.startsWith("Which wifi"));
    expect(chip?.askedBy).toBe("bob");
    await correctQuestion(
      fixture.results,
      {
        channel: corrected,
        questionId: String(chip?.id),
        action: "answered",
        answerId,
        by: PERSON.userId,
      },
      { now: () => NOW + HOUR },
    );
  }
  // A failed attempt of a segment not yet extracted, and the day's spend: no person in either.
  await fixture.results.acquireLease(channel, "m2", {
    owner: "owner",
    now: NOW,
    leaseMs: 60_000,
    expiresAt: NOW + 24 * HOUR,
  });
  await fixture.results.releaseLease(channel, "m2", "owner", {
    calls: 1,
    inputTokens: 100,
    outputTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  await fixture.spend.add(channel, "2026-07-01", 107);
  await fixture.spend.add(DEPLOYMENT_PARTITION, "2026-07-01", 107);
  return { ids, written };
}

/** What of the person an item holds, by what it is. */
function traces(item: Record<string, unknown>, messageIds: readonly string[]): string[] {
  const text = JSON.stringify(item).toLowerCase();
  const found: string[] = [];
  if (THEIR_NAME.test(text)) found.push("name");
  if (text.includes(PERSON.userId.toLowerCase())) found.push("user id");
  for (const word of THEIR_WORDS) if (text.includes(word.slice(0, 6))) found.push(word);
  for (const id of messageIds) if (text.includes(JSON.stringify(id))) found.push(id);
  return found;
}

const describeItem = (item: Record<string, unknown>) =>
  `${String(item.channel)} ${String(item.item ?? item.id)}`;

/**
 * What of the person a derived index's document holds: as {@link traces}, but a message's or a
 * conversation's words that are the others' own may name them, as the messages table keeps them.
 */
function documentTraces(document: Record<string, unknown>, messageIds: readonly string[]) {
  const { text, ...rest } = document;
  const quoted = document.kind === "message" || document.kind === "conversation";
  const inText = traces({ text }, messageIds).filter((found) => !quoted || found !== "name");
  return [...new Set([...traces(rest, messageIds), ...inText])];
}

/** What of the person an item of `kind` holds. */
const tracesOf = (kind: KnowledgeKind, item: Record<string, unknown>, ids: readonly string[]) =>
  inResultsTable(kind) ? traces(item, ids) : documentTraces(item, ids);

/** The results table's items by kind, and each derived index's documents of `channels`. */
async function allByKind(
  fixture: KindsFixture,
  indexes: Indexes,
  channels: Iterable<string>,
): Promise<Map<KnowledgeKind, Record<string, unknown>[]>> {
  const found = byKind(await fixture.items());
  for (const [kind, index] of indexes.each) found.set(kind, await index.documents([...channels]));
  return found;
}

/** The kinds the fixture checks: derived indexes' only where it runs them. */
const checked = (indexes: Indexes) =>
  KINDS.filter((kind) => inResultsTable(kind) || indexes.each.has(kind));

function byKind(
  items: readonly Record<string, unknown>[],
): Map<KnowledgeKind, Record<string, unknown>[]> {
  const found = new Map<KnowledgeKind, Record<string, unknown>[]>();
  for (const item of items) {
    const kind = kindOf(String(item.item));
    expect(kind, `${describeItem(item)} is of no registered kind`).toBeDefined();
    if (kind !== undefined) found.set(kind, [...(found.get(kind) ?? []), item]);
  }
  return found;
}

const EXPIRES = RESULTS_TTL_ATTRIBUTE;
const partitionOf = (item: Record<string, unknown>) => String(item[RESULTS_PARTITION_KEY]);
const keyOf = (partition: string, sortKey: string) => JSON.stringify([partition, sortKey]);
const shown = (expiry: unknown) => (expiry === undefined ? "no expiry" : String(expiry));

/**
 * Where an item's expiry (its TTL attribute, epoch seconds) differs from what its kind's
 * retention declares, one line each; empty when none does. A result is the `result#` item of the
 * segment its kind's `resultOf` names, in the item's partition; the fixture's results all expire,
 * so an item going "with its result" must too.
 */
function expiryMismatches(itemsByKind: Map<KnowledgeKind, Record<string, unknown>[]>): string[] {
  const all = [...itemsByKind.values()].flat();
  const byKey = new Map(
    all.map((item) => [keyOf(partitionOf(item), String(item[RESULTS_SORT_KEY])), item]),
  );
  const resultOf = (partition: string, segmentId: string) =>
    byKey.get(keyOf(partition, resultItemKey(segmentId)));
  const wrong: string[] = [];
  for (const kind of KINDS) {
    for (const item of itemsByKind.get(kind) ?? []) {
      const expiry = item[EXPIRES];
      const fail = (why: string) => wrong.push(`${kind.name}: ${describeItem(item)} ${why}`);
      switch (kind.retention) {
        case "with its result": {
          const segmentId = kind.resultOf(item);
          const result =
            segmentId === undefined ? undefined : resultOf(partitionOf(item), segmentId);
          if (segmentId === undefined) fail("names no segment");
          else if (result === undefined) fail(`goes with segment ${segmentId}'s result: none`);
          else if (typeof result[EXPIRES] !== "number") fail("goes with a result with no expiry");
          else if (expiry !== result[EXPIRES]) {
            fail(`expires at ${shown(expiry)}, its result at ${shown(result[EXPIRES])}`);
          }
          break;
        }
        case "own expiry":
          if (typeof expiry !== "number") fail("has no expiry of its own");
          break;
        case "kept":
          if (expiry !== undefined) fail(`is kept, but expires at ${shown(expiry)}`);
          break;
      }
    }
  }
  return wrong;
}

/** The redactor of the fixture's stores, telling the derived indexes what it redacted. */
const redactorOf = (fixture: KindsFixture, indexes: Indexes) =>
  new KnowledgeRedactor({
    store: fixture.results,
    states: storedMessageStates(fixture.history),
    onRedacted: allIndexes(indexes).redacted,
  });

async function erase(
  fixture: KindsFixture,
  request: EraseRequest,
  indexes: Indexes,
): Promise<void> {
  const outcome = await eraseUser(
    {
      messages: fixture.history,
      redactor: redactorOf(fixture, indexes),
      search: allIndexes(indexes),
      results: fixture.results,
      channelNames: fixture.channelNames,
      audits: fixture.audits,
      auditSecret: "kinds-conformance-audit-secret",
      digests: fixture.digests,
      now: () => NOW + 100 * HOUR,
    },
    request,
  );
  expect(outcome.done).toBe(true);
  // The ledger follows the tables, as `erase` on a workspace does.
  const refs = [
    ...(request.userId === undefined ? [] : [{ userId: request.userId }]),
    ...(request.user === undefined ? [] : [{ user: request.user }]),
  ];
  await fixture.ledger?.eraseAuthor(refs, request.channels);
}

/**
 * Every item of every table that still holds the person: their name or user id anywhere, the
 * words only they wrote, and in the results table their message ids (their deleted messages and
 * the ledger's bodies keep their ids and times, as a deletion does). The others' messages name
 * them in their own words, which are theirs to keep: their text is not looked at.
 */
async function everywhere(
  fixture: KindsFixture,
  written: ReadonlyMap<string, readonly string[]>,
  ids: readonly string[],
  indexes: Indexes,
): Promise<string[]> {
  const others = (author: unknown) => typeof author === "string" && author !== PERSON.user;
  const messages = (await fixture.messageItems(written)).map(({ parts, ...item }) =>
    others(item.author) ? item : { ...item, parts },
  );
  const ledger = ((await fixture.ledger?.entries()) ?? []).map(({ segment }) => ({
    ...segment,
    messages: segment.messages?.map(({ text, ...m }) => (others(m.author) ? m : { ...m, text })),
  }));
  const digests = fixture.digests.all();
  const tables: [string, Record<string, unknown>[], readonly string[]][] = [
    ["messages", messages, []],
    ["results", await fixture.items(), ids],
    ["ledger", ledger, []],
    ["digests", digests, ids],
  ];
  const found = tables.flatMap(([table, items, cited]) =>
    items.flatMap((item) => {
      const found = traces(item, cited);
      return found.length === 0 ? [] : [`${table}: ${JSON.stringify(item)}: ${found.join(", ")}`];
    }),
  );
  for (const [kind, index] of indexes.each) {
    for (const document of await index.documents([...written.keys()])) {
      const held = documentTraces(document, ids);
      if (held.length > 0)
        found.push(`${kind.name}: ${describeItem(document)}: ${held.join(", ")}`);
    }
    found.push(...onDisk(kind, index).map((what) => `${kind.name}: a file holds ${what}`));
  }
  return found;
}

/**
 * What of the person a derived index's files hold: their user id, the words only they wrote
 * (their name may stay in the others' messages, as the messages table keeps it).
 */
function onDisk(kind: KnowledgeKind, index: DerivedIndex): string[] {
  const bytes = index.bytes().toLowerCase();
  const wanted = [PERSON.userId.toLowerCase(), ...THEIR_WORDS.map((word) => word.slice(0, 6))];
  expect(bytes.length, `${kind.name}: no file was written`).toBeGreaterThan(0);
  return wanted.filter((what) => bytes.includes(what));
}

export function describeKinds(name: string, make: () => Promise<KindsFixture>): void {
  describe(`knowledge kinds on ${name}`, () => {
    const request: EraseRequest = { ...PERSON, requestedBy: "dpo" };

    /** The fixture's derived indexes, closed when the test ends. */
    const indexesOf = async (fixture: KindsFixture) => {
      const indexes = await openIndexes(fixture);
      onTestFinished(() => {
        for (const index of indexes.each.values()) index.close();
      });
      return indexes;
    };

    it("every registered kind holds nothing of an erased person", async () => {
      const fixture = await make();
      const indexes = await indexesOf(fixture);
      const { ids, written } = await deployment(fixture, "kinds", indexes);
      const channels = [...written.keys()];
      const before = await allByKind(fixture, indexes, channels);
      for (const kind of checked(indexes)) {
        const items = before.get(kind) ?? [];
        const holding = items.filter((item) => tracesOf(kind, item, ids).length > 0);
        if (kind.personal.length === 0) {
          expect(holding.map(describeItem), `${kind.name} declares nothing personal`).toEqual([]);
        } else if (kind.erase !== "nothing to erase") {
          expect(holding.length, `${kind.name}: nothing of the person was written`).toBeGreaterThan(
            0,
          );
        }
      }
      for (const [kind, index] of indexes.each) {
        expect(await index.find(THEIR_WORDS[0], channels), `${kind.name} finds them`).not.toEqual(
          [],
        );
        expect(onDisk(kind, index), `${kind.name} keeps them on disk`).not.toEqual([]);
      }

      await erase(fixture, request, indexes);

      const after = await allByKind(fixture, indexes, channels);
      const kept: string[] = [];
      for (const kind of checked(indexes)) {
        // The erasure writes its audit: every kind has items to check by now.
        const written = [...(before.get(kind) ?? []), ...(after.get(kind) ?? [])];
        expect(written.length, `${kind.name}: no item was written`).toBeGreaterThan(0);
        if (kind.personal.length === 0) {
          const holding = (after.get(kind) ?? []).filter(
            (item) => tracesOf(kind, item, ids).length > 0,
          );
          expect(holding.map(describeItem), `${kind.name} declares nothing personal`).toEqual([]);
        }
        const left = (after.get(kind) ?? []).flatMap((item) => {
          const found = tracesOf(kind, item, ids);
          return found.length === 0 ? [] : [`${describeItem(item)}: ${found.join(", ")}`];
        });
        kept.push(...left.map((item) => `${kind.name}: ${item}`));
      }
      expect(kept.sort(), "kinds keep the person").toEqual([]);
      // No query of a derived index finds them, and no file of it holds them.
      for (const [kind, index] of indexes.each) {
        for (const words of [...THEIR_WORDS, PERSON.userId]) {
          const found = await index.find(words, channels);
          expect(found.map(describeItem), `${kind.name} finds ${words}`).toEqual([]);
        }
        // The others' messages naming them are theirs: found, but nothing they wrote.
        const named = await index.find(PERSON.user, channels);
        const theirs = named.filter(
          (hit) => hit.author === PERSON.user || hit.authorId === PERSON.userId,
        );
        expect(theirs.map(describeItem), `${kind.name} finds what they wrote`).toEqual([]);
        expect(onDisk(kind, index), `${kind.name} keeps them on disk`).toEqual([]);
      }
      // The others' knowledge stays: the offline channel still counts their bootloader.
      const terms = await fixture.results.termCounts(
        "kinds#offline",
        KEYPHRASE_VOCABULARY,
        ["bootloader"],
        "nobody",
      );
      expect(terms.frequencies.get("bootloader")).toBe(1);
      for (const [kind, index] of indexes.each) {
        const bootloader = await index.find("bootloader", ["kinds#offline"]);
        expect(bootloader.length, `${kind.name} keeps the others'`).toBeGreaterThan(0);
      }
    });

    it.each([
      ["their user id and name", request],
      ["their user id alone", { userId: PERSON.userId, requestedBy: "dpo" }],
    ])(
      "erased by %s, no table holds their name, as a word, a term or a channel's name, nor their words",
      async (_, request) => {
        const fixture = await make();
        const indexes = await indexesOf(fixture);
        const { ids, written } = await deployment(fixture, "scan", indexes);
        await writeDigests(fixture, written);
        const before = await everywhere(fixture, written, ids, indexes);
        // The scan sees them where they were: their messages, the private chat's name on the
        // others' messages too, the term statistics, and the ledger's bodies where there is one.
        const dm = (await fixture.messageItems(written)).filter(
          (item) => item.author === "ann" && item.channelName === PERSON.user,
        );
        expect(dm.length).toBeGreaterThan(0);
        expect(before.some((found) => found.includes('"item":"term#'))).toBe(true);
        expect(before.some((found) => found.includes('"item":"termlog#'))).toBe(true);
        if (fixture.ledger !== undefined) {
          expect(before.some((found) => found.startsWith("ledger: "))).toBe(true);
        }
        for (const kind of indexes.each.keys()) {
          expect(before.some((found) => found.startsWith(`${kind.name}: `))).toBe(true);
        }
        // The stored digests quote them, in the current version and the one it replaced.
        expect(before.filter((found) => found.startsWith("digests: ")).length).toBeGreaterThan(1);

        await erase(fixture, request, indexes);

        expect(await everywhere(fixture, written, ids, indexes), "the person is left").toEqual([]);
        // Another period's digest, without them, stays.
        expect(fixture.digests.all().map((d) => d.key)).toEqual(["digests/2020-01-06/digest.json"]);
        // The private chat's messages are the others' own, and stay; only its name goes.
        const left = (await fixture.messageItems(written)).filter((item) => item.author === "ann");
        expect(
          left.filter((item) => String(item.channel ?? item.conversation).endsWith("#dm")),
        ).toHaveLength(2);
        expect(left.filter((item) => item.channelName === "help").length).toBeGreaterThan(0);
      },
    );

    it("erased after their segments' results expired, their words leave the kept term statistics", async (context) => {
      const fixture = await make();
      if (fixture.expire === undefined) return context.skip();
      const indexes = await indexesOf(fixture);
      const { ids, written } = await deployment(fixture, "expired", indexes);
      await fixture.expire((NOW + RESULT_RETENTION_MS) / 1000 + 365 * 86_400);
      const left = await everywhere(fixture, written, ids, indexes);
      expect(left.some((found) => found.includes('"item":"termlog#'))).toBe(true);
      expect(left.some((found) => found.includes('"item":"result#'))).toBe(false);

      await erase(fixture, request, indexes);

      expect(await everywhere(fixture, written, ids, indexes), "the person is left").toEqual([]);
    });

    it("every registered kind's items expire as its retention declares", async () => {
      const fixture = await make();
      const indexes = await indexesOf(fixture);
      const { written } = await deployment(fixture, "kept", indexes);
      const channels = [...written.keys()];
      const before = await allByKind(fixture, indexes, channels);
      expect(expiryMismatches(before), "before the erasure").toEqual([]);
      // The erasure rewrites what held the person, and writes its audit.
      await erase(fixture, request, indexes);
      const after = await allByKind(fixture, indexes, channels);
      for (const kind of checked(indexes)) {
        const written = [...(before.get(kind) ?? []), ...(after.get(kind) ?? [])];
        expect(written.length, `${kind.name}: no item was written`).toBeGreaterThan(0);
      }
      expect(expiryMismatches(after), "after the erasure").toEqual([]);
      // A derived index keeps documents by their time: past the retention, none is found, and
      // the channel's next write removes them.
      const offline = "kept#offline";
      const result = await fixture.results.getResult(offline, "o2");
      for (const [kind, index] of indexes.each) {
        expect(kind.retention, `${kind.name}: a derived index's retention`).toBe("by its time");
        indexes.clock.now = NOW;
        expect(await index.find("bootloader", [offline])).not.toEqual([]);
        indexes.clock.now = NOW + RESULT_RETENTION_MS + DAY;
        expect(await index.find("bootloader", [offline]), `${kind.name} past retention`).toEqual(
          [],
        );
        expect(await index.documents([offline])).not.toEqual([]);
        await index.stored(result as SegmentResult);
        expect(await index.documents([offline]), `${kind.name} after a write`).toEqual([]);
      }
    });

    it("every derived index follows a message's edit and deletion, and the channel's deletion", async (context) => {
      const fixture = await make();
      const indexes = await indexesOf(fixture);
      if (indexes.each.size === 0) return context.skip();
      const { written } = await deployment(fixture, "follow", indexes);
      const channel = "follow#model";
      const [gone, , reinstall] = written.get(channel) ?? [];
      // "my #grub menu is gone" (at NOW) edited; "reinstall #grub from a live usb" deleted.
      await fixture.history.change(channel, {
        kind: "edit",
        id: gone,
        text: "my #grub menu vanished overnight",
        editedAt: NOW + HOUR,
      });
      await fixture.history.change(channel, { kind: "delete", id: reinstall });
      await redactorOf(fixture, indexes).redact(channel, [
        { id: gone, ts: NOW, kind: "edit" },
        { id: reinstall, ts: NOW + 2 * 60_000, kind: "delete" },
      ]);
      const offline = ["follow#offline", "follow#dm"];
      for (const [kind, index] of indexes.each) {
        const cites = (id: string) => (d: Record<string, unknown>) =>
          JSON.stringify(d.evidence).includes(JSON.stringify(id).slice(1, -1));
        expect(await index.find("gone", [channel]), `${kind.name}: the edit's old words`).toEqual(
          [],
        );
        const edited = await index.find("vanished", [channel]);
        expect(edited.filter(cites(gone)).length, `${kind.name}: the edit`).toBeGreaterThan(0);
        expect(await index.find("reinstall", [channel]), `${kind.name}: the deleted`).toEqual([]);
        const citing = (await index.documents([channel])).filter(cites(reinstall));
        expect(citing.map(describeItem), `${kind.name} cites the deleted`).toEqual([]);

        // `channel delete`, as the kind's storage declares it.
        expect(kind.storage).toMatchObject({ channelDeletion: "table dropped" });
        for (const gone of offline) await index.deleteChannel(gone);
        expect(await index.documents(offline), `${kind.name} after channel delete`).toEqual([]);
        expect(await index.find("bootloader", [...written.keys()])).toEqual([]);
        expect(index.bytes(), `${kind.name}: a file of a deleted channel`).not.toContain(
          "bootloader",
        );
        // The other channel stays.
        expect(await index.find("vanished", [channel])).not.toEqual([]);
      }
    });
  });
}
