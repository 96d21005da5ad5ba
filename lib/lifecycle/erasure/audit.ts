/**
 * The audit item of an erasure: who asked, when, in which channels, what was erased (counts) and
 * whether it finished, and where it stands, so that a run that stopped (a crash, a deadline) is
 * resumed by the next. It names the person only by their author key (a hash): the item outlives
 * the erasure, and must not keep the name or user id it erased.
 */
import { createHmac } from "node:crypto";
import { type ErasureCountName, noCounts } from "../../knowledge/index.js";
import { ERASURE_AUDIT_PREFIX } from "../../knowledge/store/schema/index.js";

/**
 * What an erasure removed, counted as it went: the messages deleted, and each knowledge kind's
 * counts that the registry (`lib/knowledge/kinds.ts`) says an erasure keeps.
 */
export type ErasureCounts = { messages: number } & Record<ErasureCountName, number>;

export const NO_COUNTS: Readonly<ErasureCounts> = Object.freeze({
  messages: 0,
  ...noCounts<ErasureCountName>((count) => count.erasure),
});

/**
 * An audit item as stored, its counts completed: one written before a count was added (as
 * `questionsRemoved`) lacks it, and reads it as 0, so that a resumed run adds to a number.
 */
export function storedAudit(item: Record<string, unknown>): ErasureAudit {
  const audit = item as unknown as ErasureAudit;
  return { ...audit, counts: { ...NO_COUNTS, ...audit.counts } };
}

/** A message of the page in flight: where it is, and its time (how its results are found). */
export interface ErasedMessage {
  channel: string;
  id: string;
  ts: number;
}

export interface ErasureAudit {
  v: 1;
  /**
   * Whom it erases: {@link auditKeyOf} the `userIdKeyOf` their user id, or (erasing by name
   * only) of the `authorKeyOf` it.
   */
  authorKey: string;
  /** {@link auditKeyOf} the stored name also erased with a user id (messages stored without one). */
  nameKey?: string;
  /** The channels it was limited to, or null for every channel. */
  channels: string[] | null;
  requestedBy: string;
  /** ISO 8601: when the erasure was first asked for (it orders a person's audit items). */
  requestedAt: string;
  state: "started" | "finished";
  finishedAt?: string;
  /** How many runs worked on it: more than one when it was resumed. */
  runs: number;
  counts: ErasureCounts;
  /** The page being erased: counted once it is done, redone whole by a resumed run. */
  batch: ErasedMessage[];
  /** Where the next page of the person's messages starts; absent: at the start. */
  cursor?: string;
  /** The last page was read: once `batch` is done, the erasure is finished. */
  exhausted: boolean;
  /** Bumped on every write: a write against an older version is refused (two runs at once). */
  version: number;
}

/** Where audit items are kept (the results table on DynamoDB, or memory). */
export interface AuditStore {
  /** The person's unfinished erasure, if any (consistent). */
  unfinished(authorKey: string): Promise<ErasureAudit | undefined>;
  /** Every audit item of the person, oldest first. */
  list(authorKey: string): Promise<ErasureAudit[]>;
  /**
   * Writes `audit` (whose `version` is one more than the stored one, or 1 for a new item);
   * false when another write came first.
   */
  save(audit: ErasureAudit): Promise<boolean>;
}

const copy = <T>(value: T): T => structuredClone(value);

/** Audit items in memory: for tests, benchmarks and the memory pipeline. */
export class MemoryAuditStore implements AuditStore {
  private readonly items = new Map<string, ErasureAudit>();

  async unfinished(authorKey: string): Promise<ErasureAudit | undefined> {
    return (await this.list(authorKey)).find((a) => a.state !== "finished");
  }

  async list(authorKey: string): Promise<ErasureAudit[]> {
    return [...this.items.values()]
      .filter((a) => a.authorKey === authorKey)
      .sort((a, b) => (a.requestedAt < b.requestedAt ? -1 : 1))
      .map(copy);
  }

  async save(audit: ErasureAudit): Promise<boolean> {
    const key = auditItemKey(audit);
    const stored = this.items.get(key);
    if ((stored?.version ?? 0) !== audit.version - 1) return false;
    this.items.set(key, copy(audit));
    return true;
  }

  /** Every item, for checks that nothing else is kept. */
  all(): ErasureAudit[] {
    return [...this.items.values()].map(copy);
  }
}

/** The shortest audit secret taken: 128 bits as hex or base64 text. */
export const MIN_AUDIT_SECRET_CHARS = 16;

/**
 * The key an audit item names a person by: an HMAC-SHA256 of their author key (a hash of their
 * user id or name) with the deployment's secret, as 32 hex digits. A plain hash could be undone
 * by hashing a list of names or ids until one matches; without the secret this cannot.
 */
export function auditKeyOf(secret: string, authorKey: string): string {
  return createHmac("sha256", secret).update(authorKey).digest("hex").slice(0, 32);
}

/** The sort key of an audit item: the person's key, then when it was asked for. */
export function auditItemKey(audit: Pick<ErasureAudit, "authorKey" | "requestedAt">): string {
  return `${ERASURE_AUDIT_PREFIX}${audit.authorKey}#${audit.requestedAt}`;
}
