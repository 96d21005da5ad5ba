/**
 * Every kind of item knowledge keeps, in one place: where each is stored and how it is keyed,
 * what of a person it may hold, and how it is redacted (a message edited or deleted), erased (a
 * person), counted, served and retained. Redaction, erasure, `channel delete` and the per-kind
 * counts read this list instead of naming kinds, and the conformance test
 * (test/knowledge/kinds-conformance.ts) runs every entry on every store: a kind added here
 * without a working redaction and erasure path, or whose items do not expire as its retention
 * says, fails it. A derived index kept outside the results table (search) is an entry too, named
 * by its `storage.index`: knowledge never imports its implementation (an outlet), so the
 * conformance test wires one for each index named here (test/knowledge/derived-indexes.ts), and
 * an index registered without one fails it.
 */
import { CORRECTION_PREFIX } from "./store/correction-item.js";
import {
  ERASURE_AUDIT_PREFIX,
  LEASE_PREFIX,
  QUESTION_PREFIX,
  RESULT_PREFIX,
  SPAN_PREFIX,
  SPAN_WIDTHS_KEY,
  SPEND_PREFIX,
  TERM_LOG_PREFIX,
  TERM_PREFIX,
  TERMS_PREFIX,
  TOPIC_PREFIX,
  WINDOW_PREFIX,
} from "./store/schema/items.js";

/** What of a person an item may hold. */
type Personal = "name" | "words" | "message ids";

/**
 * What a change to one of a segment's messages (an edit, a deletion) does to the kind:
 * - `result plan`: rewritten or removed as the result's redaction plan says, the result written
 *   last (its candidates, questions and evidence; the topic and question entries follow it);
 * - `replies deleted`: the segment's items are deleted (they may quote the message);
 * - `terms withdrawn`: what the segment counted is taken out of the statistics (a re-extraction
 *   counts it anew from what is left);
 * - `corrections follow`: per channel, whichever segment holds the message: a correction whose
 *   asking message is deleted goes, one whose answering message is deleted keeps its status
 *   without it (`answerRemoved`);
 * - `index rewritten`: a derived index's writer is told each segment redacted (the redactor's
 *   `onRedacted`): what cites a deleted message goes, and the segment's documents are written
 *   again from the stores;
 * - `nothing to redact`: its items hold no message text, name or id.
 */
export type RedactionPath =
  | "result plan"
  | "replies deleted"
  | "terms withdrawn"
  | "corrections follow"
  | "index rewritten"
  | "nothing to redact";

/**
 * What an erasure does to the kind besides redacting the person's deleted messages:
 * - `names scrubbed`: the person's names leave the results whose span holds their messages (an
 *   author list; a candidate or question naming them goes), with those results' entries and
 *   replies;
 * - `name terms removed`: terms naming the person leave the channel's statistics;
 * - `corrector forgotten`: corrections they made stay, without who made them (`by`, their user
 *   id or a name of theirs), in every channel of the erasure, where they wrote or not; what
 *   cites their messages follows the redaction of those;
 * - `index purged`: a derived index's writer (the erasure's `search`), after each page's
 *   deletions, takes out what cites their messages, what they wrote and what names them, writes
 *   those segments again from the scrubbed stores, and leaves no older version on disk;
 * - `nothing to erase`: its items hold nothing of a person.
 */
export type ErasurePath =
  | "names scrubbed"
  | "name terms removed"
  | "corrector forgotten"
  | "index purged"
  | "nothing to erase";

/**
 * How long its items stay: with their result (`expiresAt` is the result's), on their own TTL
 * (`expiresAt` of their own), until `channel delete` (the audit for ever), or, in a derived
 * index, by their time: past the deployment's retention they are never found, and the channel's
 * next write removes them.
 */
type Retention = "with its result" | "own expiry" | "kept" | "by its time";

/** An item of the results table as stored, keys and `expiresAt` included. */
type StoredItem = Readonly<Record<string, unknown>>;

/**
 * How long its items stay, and for a kind kept `with its result`, which result an item goes
 * with: `resultOf` names its segment (the result is that segment's `result#` item in the item's
 * partition; undefined: the item names none, which the conformance test fails).
 */
type KindRetention =
  | {
      readonly retention: "with its result";
      readonly resultOf: (item: StoredItem) => string | undefined;
    }
  | { readonly retention: Exclude<Retention, "with its result">; readonly resultOf?: never };

/** The segment an item names in its `segmentId` (results, topic and question entries, spans). */
const itsSegment = (item: StoredItem): string | undefined =>
  typeof item.segmentId === "string" ? item.segmentId : undefined;

/** Who reads the kind: the outlets (lib/outlets), the reader, or extraction itself. */
type Reader =
  | "api"
  | "digest"
  | "report"
  | "search"
  | "reader"
  | "extraction"
  | "redaction"
  | "erasure";

/**
 * Where a kind's items are: the results table, in a channel's partition (or the deployment's
 * own, ` deployment`), under these sort key prefixes (an exact key is its own prefix); or a
 * derived index of its own (`index`, its name), kept `location`, with a part per channel that
 * `channel delete` removes as `channelDeletion` says.
 */
interface TableStorage {
  readonly table: "results";
  readonly partition: "channel" | "deployment" | "channel and deployment";
  readonly prefixes: readonly string[];
}
type KindStorage =
  | TableStorage
  | {
      readonly index: string;
      readonly location: string;
      readonly channelDeletion: "table dropped";
    };

/**
 * A count a redaction or an erasure reports of the kind: its EMF metric name when redaction
 * reports it (null: erasure only), whether the erasure's audit item keeps it, and how the
 * `erase` command prints it.
 */
export interface KindCount {
  readonly metric: string | null;
  readonly erasure: boolean;
  readonly label: string;
}

export type KnowledgeKind = KindRetention & {
  /** How reports and docs name it. */
  readonly name: string;
  readonly storage: KindStorage;
  /** How one item is keyed. */
  readonly keying: string;
  /** Which messages and which authors its items derive from. */
  readonly derivation: string;
  /** What of a person its items may hold; none: nothing personal (the conformance test checks). */
  readonly personal: readonly Personal[];
  readonly redact: RedactionPath;
  readonly erase: ErasurePath;
  /** Its counts, by name (unique across kinds). */
  readonly counts: Readonly<Record<string, KindCount>>;
  readonly serve: readonly Reader[];
};

const both = { erasure: true } as const;

/** The registry. */
export const KINDS = [
  {
    name: "segment results",
    storage: { table: "results", partition: "channel", prefixes: [RESULT_PREFIX] },
    keying: "result#<segmentId>: one per segment, the source of truth",
    derivation:
      "every message of its segment; the authors of each candidate's evidence and each question's asker",
    personal: ["name", "words", "message ids"],
    redact: "result plan",
    erase: "names scrubbed",
    counts: {
      results: { ...both, metric: "ResultsRedacted", label: "results rewritten or removed" },
      candidatesRemoved: { ...both, metric: "CandidatesRedacted", label: "candidates removed" },
      authorsRemoved: {
        metric: null,
        erasure: true,
        label: "author lists cleared of the name",
      },
      reextractionsRequested: {
        metric: "ReextractionsRequested",
        erasure: false,
        label: "re-extractions requested",
      },
    },
    serve: ["api", "digest", "report", "reader", "extraction"],
    retention: "with its result",
    resultOf: itsSegment,
  },
  {
    name: "topic index entries",
    storage: { table: "results", partition: "channel", prefixes: [TOPIC_PREFIX] },
    keying: "topic#<topicKey>#<segmentId>: one per topic per segment",
    derivation: "a candidate of a result: its evidence's messages",
    personal: ["words", "message ids"],
    redact: "result plan",
    erase: "names scrubbed",
    counts: {
      topicEntriesUpdated: {
        ...both,
        metric: "TopicEntriesRedacted",
        label: "topic entries updated",
      },
      topicEntriesDeleted: {
        ...both,
        metric: "TopicEntriesRemoved",
        label: "topic entries deleted",
      },
    },
    serve: ["api", "digest", "report", "reader"],
    retention: "with its result",
    resultOf: itsSegment,
  },
  {
    name: "question index entries",
    storage: { table: "results", partition: "channel", prefixes: [QUESTION_PREFIX] },
    keying: "question#<status>#<askedTs>#<segmentId>#<questionId>: one per question per segment",
    derivation: "a question of a result: the asking and answering messages, the asker",
    personal: ["name", "words", "message ids"],
    redact: "result plan",
    erase: "names scrubbed",
    counts: {
      questionsRemoved: { ...both, metric: "QuestionsRedacted", label: "questions removed" },
    },
    serve: ["api", "digest", "reader"],
    retention: "with its result",
    resultOf: itsSegment,
  },
  {
    name: "question corrections",
    storage: { table: "results", partition: "channel", prefixes: [CORRECTION_PREFIX] },
    keying:
      "correction#<segmentId>#<questionId>: one per question, a person's: no extraction or result redaction writes it",
    derivation:
      "a person's word on a question: its asking message, the answering message they chose, who they are",
    personal: ["name", "message ids"],
    redact: "corrections follow",
    erase: "corrector forgotten",
    counts: {},
    serve: ["api", "digest", "report", "reader"],
    // The expiry of the question's result when corrected: it goes with the question.
    retention: "with its result",
    resultOf: itsSegment,
  },
  {
    name: "window replies",
    storage: { table: "results", partition: "channel", prefixes: [WINDOW_PREFIX] },
    keying: "window#<hash of prompt version, model and prompt>: one per window asked",
    derivation: "a window of a segment's messages, as the model answered it",
    personal: ["name", "words"],
    redact: "replies deleted",
    erase: "names scrubbed",
    counts: {
      windowsDeleted: { ...both, metric: "WindowRepliesDeleted", label: "window replies deleted" },
    },
    serve: ["extraction"],
    retention: "own expiry",
  },
  {
    name: "term statistics",
    storage: {
      table: "results",
      partition: "channel",
      prefixes: [TERMS_PREFIX, TERM_PREFIX, TERM_LOG_PREFIX],
    },
    keying:
      "terms#<vocabulary> (segments counted), term#<vocabulary>#<termKey> (one term), termlog#<vocabulary>#<segmentId>#<chunk> (what a segment counted)",
    derivation: "the offline extractor's terms of each segment: its messages' words and names",
    personal: ["name", "words"],
    redact: "terms withdrawn",
    erase: "name terms removed",
    counts: {
      termSegmentsWithdrawn: {
        ...both,
        metric: "TermSegmentsWithdrawn",
        label: "segments withdrawn from the term statistics",
      },
      nameTermsRemoved: { metric: null, erasure: true, label: "terms naming them removed" },
    },
    serve: ["extraction"],
    retention: "kept",
  },
  {
    name: "segment spans",
    storage: { table: "results", partition: "channel", prefixes: [SPAN_PREFIX] },
    keying: "span#[late#]<lastTs>#<segmentId>: one per segment",
    derivation: "the times of a segment's first and last message",
    personal: [],
    redact: "nothing to redact",
    erase: "nothing to erase",
    counts: {},
    serve: ["redaction", "erasure"],
    // Past its result: a deletion or an erasure finds through it what the segment counted into
    // the term statistics, which are kept.
    retention: "kept",
  },
  {
    // Every span's way in: kept as they are.
    name: "span widths",
    storage: { table: "results", partition: "channel", prefixes: [SPAN_WIDTHS_KEY] },
    keying: "spanwidths: one per channel, the widest span of each kind of segment",
    derivation: "the times of the channel's segments' first and last messages",
    personal: [],
    redact: "nothing to redact",
    erase: "nothing to erase",
    counts: {},
    serve: ["redaction", "erasure"],
    retention: "kept",
  },
  {
    name: "leases",
    storage: { table: "results", partition: "channel", prefixes: [LEASE_PREFIX] },
    keying: "lease#<segmentId>: one per segment in flight",
    derivation: "an extraction's attempts: its owner, tokens spent, window hashes; no message",
    personal: [],
    redact: "nothing to redact",
    erase: "nothing to erase",
    counts: {},
    serve: ["extraction"],
    retention: "own expiry",
  },
  {
    name: "spend",
    storage: { table: "results", partition: "channel and deployment", prefixes: [SPEND_PREFIX] },
    keying: "spend#<YYYY-MM-DD>: one per UTC day, per channel and for the deployment",
    derivation: "tokens extraction spent: no message",
    personal: [],
    redact: "nothing to redact",
    erase: "nothing to erase",
    counts: {},
    serve: ["extraction"],
    retention: "own expiry",
  },
  {
    name: "erasure audit",
    storage: { table: "results", partition: "deployment", prefixes: [ERASURE_AUDIT_PREFIX] },
    keying: "erasure#<authorKey>#<requestedAt>: one per erasure",
    derivation: "an erasure's request and counts: the person only as a hash",
    personal: [],
    redact: "nothing to redact",
    erase: "nothing to erase",
    counts: {},
    serve: ["erasure"],
    retention: "kept",
  },
  {
    name: "search documents",
    storage: {
      index: "search",
      location:
        "LanceDB: deployed, a table per channel at SEARCH_INDEX_URI (the stack's bucket); locally, .convoseg/search, rebuilt from the tables",
      channelDeletion: "table dropped",
    },
    keying:
      "document id: message:<id>, conversation:<segmentId>, question:<segmentId>#<questionId>, topic:<topicKey>",
    derivation:
      "a stored result and its messages: each message, the conversation, its questions, the channel's topics it supports",
    personal: ["name", "words", "message ids"],
    redact: "index rewritten",
    erase: "index purged",
    counts: {},
    serve: ["api", "search"],
    retention: "by its time",
  },
] as const satisfies readonly KnowledgeKind[];

/** The registry's derived indexes, by name (`storage.index`): each needs a conformance harness. */
export type DerivedIndexName = Extract<
  (typeof KINDS)[number]["storage"],
  { index: string }
>["index"];

/** Whether the kind is kept in the results table (not in a derived index of its own). */
export function inResultsTable<K extends KnowledgeKind>(
  kind: K,
): kind is Extract<K, { readonly storage: TableStorage }> {
  return "table" in kind.storage;
}

type Counts = (typeof KINDS)[number]["counts"];
type KeysOf<T> = T extends unknown ? keyof T : never;
type CountName = KeysOf<Counts>;
type CountOf<N extends CountName> = Extract<Counts, Record<N, unknown>>[N];

/** A count redaction reports (with a metric). */
export type RedactionCountName = {
  [N in CountName]: CountOf<N> extends { metric: string } ? N : never;
}[CountName];
/** A count the erasure's audit item keeps. */
export type ErasureCountName = {
  [N in CountName]: CountOf<N> extends { erasure: true } ? N : never;
}[CountName];

/** Every kind's counts, by name, in registry order. */
export const KIND_COUNTS: ReadonlyMap<CountName, KindCount> = new Map(
  KINDS.flatMap((kind) => Object.entries(kind.counts) as [CountName, KindCount][]),
);

/** A zero of every count `pick` keeps. */
export function noCounts<N extends CountName>(
  pick: (count: KindCount) => boolean,
): Record<N, number> {
  const zero: Record<string, number> = {};
  for (const [name, count] of KIND_COUNTS) if (pick(count)) zero[name] = 0;
  return zero as Record<N, number>;
}

/** The kind an item of the results table is, by its sort key; undefined: of no registered kind. */
export function kindOf(item: string): KnowledgeKind | undefined {
  return KINDS.filter(inResultsTable).find((kind) =>
    kind.storage.prefixes.some((prefix) => item.startsWith(prefix)),
  );
}
