import { randomUUID } from "node:crypto";
import { expirySeconds } from "../../base/dynamodb/index.js";
import { copyPlatformFields, kindOf, type Message, messageText } from "../../history/index.js";
import type { InlineMessage } from "../../segmentation/pipeline/contract/index.js";
import {
  type AnalyzerOptions,
  addCall,
  type Candidate,
  dedupeCandidates,
  type ExtractionTurn,
  type Extractor,
  NO_CALLS,
  normalizeTopic,
  type UsageListener,
  type WindowOutputs,
  type WindowUsage,
} from "../extraction/index.js";
import { PROMPT_VERSION } from "../extraction/prompts/index.js";
import type { ResultStore } from "../store/port.js";
import { storedQuestions } from "../store/result-questions.js";
import {
  type SegmentResult,
  type SegmentUsage,
  storedCandidates,
  sumUsage,
  type TopicSupport,
  windowHash,
} from "../store/schema/items.js";
import { onTimeEnvelope, type SegmentEnvelope, threadContext } from "../store/segment-envelope.js";
import { supportOf } from "../store/topic-support.js";
import type { Turn } from "../windows/index.js";
import { boundedCandidates, fitResult } from "./result-fit.js";

type ExtractionStatus = "extracted" | "already-extracted" | "replaced";

export interface ExtractionOutcome {
  status: ExtractionStatus;
  result: SegmentResult;
  /** This attempt's model calls and tokens (0 when the result was already stored). */
  attempt: SegmentUsage;
  /** Windows answered from replies stored by an earlier attempt. */
  reusedWindows: number;
}

export interface SegmentExtractorOptions {
  store: ResultStore;
  /**
   * The LLM-backed `Analyzer`, or the offline `KeyphraseExtractor`; or the one for a segment
   * (an analyzer on a model guarded by the segment's channel budget).
   */
  extractor: Extractor | ((segment: SegmentEnvelope) => Extractor);
  /** The model id results are keyed by (a new model re-extracts). */
  model: string;
  /** Identifies prompts and analysis settings: see {@link promptVersionOf}. */
  promptVersion: string;
  /** How long one extraction may hold its segment (default 15 minutes). */
  leaseMs?: number;
  /** How long window replies and leases are kept for retries (default 15 days). */
  retentionMs?: number;
  /**
   * How long results and topic entries are kept after the segment's first message (the
   * deployment's `resultRetentionDays`), and window replies at most: with it they carry
   * `expiresAt` for DynamoDB's TTL. Default: kept until deleted.
   */
  resultRetentionMs?: number;
  now?: () => number;
  /** This process's lease owner id (default: a random UUID per extraction). */
  owner?: () => string;
  /**
   * Show system lines (joins, parts, mode and topic changes) to the extractor too (default false:
   * they are stored and segmented, and their messages are in the result, but no extractor reads
   * them). The deployment's `showSystemMessages` setting (`SHOW_SYSTEM_MESSAGES`). The offline
   * extractor skips them whatever this says: they name no subject it could weigh.
   */
  showSystemLines?: boolean;
}

const DEFAULT_LEASE_MS = 15 * 60_000;
const DEFAULT_RETENTION_MS = 15 * 86_400_000;

/**
 * The version results are keyed by: the prompts' version, the route and window settings, and
 * `+system` when system lines are shown (`showSystemLines`), so that a change to any makes the
 * next delivery re-extract (and say it replaced the result).
 */
export function promptVersionOf(
  options: Required<
    Pick<AnalyzerOptions, "route" | "windowSize" | "overlap" | "prefixStep" | "maxWindows">
  >,
  shown: { showSystemLines?: boolean } = {},
): string {
  const { route, windowSize, overlap, prefixStep, maxWindows } = options;
  const settings =
    route === "sliding"
      ? `${windowSize}-${overlap}`
      : route === "prefix" || route === "non_prefix"
        ? `${prefixStep}-${maxWindows}`
        : "";
  const system = shown.showSystemLines ? "+system" : "";
  return `${PROMPT_VERSION}/${route}${settings === "" ? "" : `-${settings}`}${system}`;
}

/**
 * A chat message as the extractor reads it: a user turn with its author, kind, text, id, and
 * the message it answers: its `replyTo`, else, for a reply in a thread, the thread's root, else
 * the one the reply linker inferred.
 */
function messageTurn(message: InlineMessage): ExtractionTurn {
  const turn: ExtractionTurn = {
    role: "user",
    kind: kindOf(message),
    text: message.text,
    id: message.id,
  };
  if (message.author !== undefined) turn.author = message.author;
  const answers = message.replyTo ?? message.thread ?? message.inferredReplyTo;
  if (answers !== undefined && answers !== message.id) turn.replyTo = answers;
  return turn;
}

/** An imported transcript's turn (its role and rendered text) as the extractor reads it. */
function transcriptTurn(turn: Turn): ExtractionTurn {
  return { role: turn.role, kind: "user", text: turn.content };
}

/**
 * A stored conversation (an imported transcript, say) as a segment to extract: `segmentId`
 * names this version of it, and messages without a platform timestamp get `startTs` plus their
 * index, so that evidence keeps their order.
 */
export function conversationSegment(
  conversation: string,
  segmentId: string,
  stored: readonly Message[],
  startTs: number,
): { segment: SegmentEnvelope; messages: InlineMessage[] } {
  const messages = stored.map((message, i): InlineMessage => {
    if (message.id === undefined) {
      throw new RangeError(`messages[${i}]: a message to extract needs its platform id`);
    }
    const inline: InlineMessage = {
      id: message.id,
      ts: message.ts ?? startTs + i,
      text: messageText(message),
    };
    if (message.kind !== undefined && message.kind !== "user") inline.kind = message.kind;
    copyPlatformFields(message, inline);
    return inline;
  });
  if (messages.length === 0)
    throw new RangeError(`conversation ${conversation}: nothing to extract`);
  return { segment: onTimeEnvelope(segmentId, conversation, messages), messages };
}

/**
 * Extracts a segment exactly once per model and prompt version: a stored result of the same
 * version is returned without a model call; otherwise the segment's lease is taken (a concurrent
 * delivery fails with `SegmentBusyError` rather than pay twice), the windows are analyzed with
 * the replies of earlier attempts reused and every new one stored as it arrives, and the result
 * and its topic index entries are written. A failure stores no result: it gives up the lease,
 * keeps the count of what its unsaved calls spent, and rethrows.
 */
export class SegmentExtractor {
  private readonly leaseMs: number;
  private readonly retentionMs: number;
  private readonly now: () => number;
  private readonly owner: () => string;

  constructor(private readonly options: SegmentExtractorOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.now = options.now ?? Date.now;
    this.owner = options.owner ?? randomUUID;
  }

  get model(): string {
    return this.options.model;
  }

  get promptVersion(): string {
    return this.options.promptVersion;
  }

  /**
   * `force` re-extracts even a result of the same model and prompt version (an operator's
   * choice); the new result replaces it and records what it replaced. `onUsage` and `onRepair`
   * hear of every answered model call and repair request as it happens, also in an attempt that
   * then fails.
   */
  async extract(
    segment: SegmentEnvelope,
    messages: readonly InlineMessage[],
    options: {
      force?: boolean;
      /**
       * With `force`, the `extractedAt` of the result to replace: once another is stored (the
       * request was delivered twice), a current result is kept as without `force`.
       */
      replacing?: string;
      signal?: AbortSignal;
      onUsage?: UsageListener;
      onRepair?: () => void;
      /**
       * The transcript, one turn per message (default: each message as a user turn with its
       * author, kind and text, {@link messageTurn}); an imported agent transcript keeps its roles
       * (each turn's content is its text, with no author).
       */
      turns?: readonly Turn[];
      /** The `editedAt` of each edited message whose current text `messages` hold. */
      edits?: Record<string, number>;
    } = {},
  ): Promise<ExtractionOutcome> {
    const { store } = this.options;
    const { channel, segmentId } = segment;
    const forced = (result: SegmentResult) =>
      options.force === true &&
      (options.replacing === undefined || result.extractedAt === options.replacing);
    const stored = await store.getResult(channel, segmentId);
    if (stored !== undefined && !forced(stored) && this.isCurrent(stored)) {
      return already(stored);
    }
    const owner = this.owner();
    const now = this.now();
    const lease = await store.acquireLease(channel, segmentId, {
      owner,
      now,
      leaseMs: this.leaseMs,
      expiresAt: now + this.leaseMs + this.retentionMs,
    });
    // Another delivery may have finished between the first read and the lease.
    const previous = await store.getResult(channel, segmentId);
    if (previous !== undefined && !forced(previous) && this.isCurrent(previous)) {
      await store.releaseLease(channel, segmentId, owner, NO_CALLS);
      return already(previous);
    }

    const attempt = { ...NO_CALLS };
    // What each window used cost: reused ones in an earlier attempt, stored ones in this one.
    const windows: WindowUsage[] = [];
    const storedNow: WindowUsage[] = [];
    let reusedWindows = 0;
    // Every reply the segment's attempts stored or used: a redaction deletes them.
    const hashes = new Set(lease.windows);
    const outputs: WindowOutputs = {
      get: async (prompt) => {
        const output = await store.getWindow(channel, this.windowKey(prompt));
        if (output !== undefined) {
          hashes.add(this.windowKey(prompt));
          reusedWindows++;
          windows.push(output.usage);
        }
        return output;
      },
      put: async (prompt, output) => {
        const hash = this.windowKey(prompt);
        hashes.add(hash);
        await store.putWindow(channel, hash, output, this.windowExpiry(segment), segmentId);
        windows.push(output.usage);
        storedNow.push(output.usage);
      },
    };
    let result: SegmentResult;
    try {
      const turns = options.turns?.map(transcriptTurn) ?? messages.map(messageTurn);
      if (turns.length !== messages.length) {
        throw new RangeError(
          `turns: expected one per message (${messages.length}), got ${turns.length}`,
        );
      }
      // The turns the extractor is shown, and the message each stands for.
      const shown: number[] = [];
      turns.forEach((turn, i) => {
        if (this.options.showSystemLines || turn.kind !== "system") shown.push(i);
      });
      const { extractor } = this.options;
      const context = threadContext(segment, this.options.showSystemLines === true);
      const extraction = await (typeof extractor === "function"
        ? extractor(segment)
        : extractor
      ).extract(
        shown.map((i) => turns[i]),
        {
          ...(context ? { context } : {}),
          signal: options.signal,
          outputs,
          onUsage: (usage, call) => {
            addCall(attempt, usage);
            options.onUsage?.(usage, call);
          },
          onRepair: options.onRepair,
          channel,
          statistics: {
            lookup: (vocabulary, terms) => store.termCounts(channel, vocabulary, terms, segmentId),
          },
        },
      );
      // What the segment adds to the channel's statistics, counted once whatever comes next.
      if (extraction.terms !== undefined) {
        await store.countTerms(channel, segmentId, extraction.terms);
      }
      // Held to the bounds whatever extractor made them, and to the item limit at the write; one
      // per normalized topic, which keys its index entry (a batch may not write one key twice).
      const trimmed = { ...extraction.trimmed };
      const bounded = dedupeCandidates(boundedCandidates(extraction.candidates, trimmed));
      const candidates = bounded.map((candidate) => ({
        ...candidate,
        turnRange: messageRange(candidate.turnRange, shown),
      }));
      result = this.result(segment, messages, candidates, sumUsage(lease.spent, ...windows));
      result.questions = storedQuestions(
        segmentId,
        extraction.questions ?? [],
        shown,
        messages,
        trimmed,
      );
      result.windows = [...hashes];
      if (options.edits !== undefined && Object.keys(options.edits).length > 0) {
        result.edits = options.edits;
      }
      if (previous !== undefined) {
        result.replaced = {
          model: previous.model,
          promptVersion: previous.promptVersion,
          extractedAt: previous.extractedAt,
        };
      }
      result = fitResult(result, trimmed);
      await store.saveResult(result, topicSupports(result, messages), previous, owner);
    } catch (error) {
      // What this attempt spent on replies it could not store is counted on the lease.
      const unsaved = subtract(attempt, sumUsage(...storedNow));
      await store.releaseLease(channel, segmentId, owner, unsaved).catch(() => {
        // The original failure is what the caller must see; the lease lapses on its own.
      });
      throw error;
    }
    return {
      status: previous === undefined ? "extracted" : "replaced",
      result,
      attempt,
      reusedWindows,
    };
  }

  private isCurrent(result: SegmentResult): boolean {
    return (
      result.model === this.options.model && result.promptVersion === this.options.promptVersion
    );
  }

  /** Window replies keep their retention, or go with the result when that is sooner. */
  private windowExpiry(segment: SegmentEnvelope): number {
    const now = this.now();
    const kept = now + this.retentionMs;
    const { resultRetentionMs } = this.options;
    if (resultRetentionMs === undefined) return kept;
    return Math.min(kept, Math.max(segment.first.ts + resultRetentionMs, now));
  }

  private windowKey(prompt: string): string {
    return windowHash(this.options.promptVersion, this.options.model, prompt);
  }

  private result(
    segment: SegmentEnvelope,
    messages: readonly InlineMessage[],
    candidates: Parameters<typeof storedCandidates>[1],
    usage: SegmentUsage,
  ): SegmentResult {
    const now = this.now();
    const { resultRetentionMs } = this.options;
    const result: SegmentResult = {
      v: 1,
      channel: segment.channel,
      segmentId: segment.segmentId,
      late: segment.late,
      belongsAfter: segment.belongsAfter,
      ...(segment.thread === undefined ? {} : { thread: segment.thread }),
      count: segment.count,
      first: segment.first,
      last: segment.last,
      messageIds: messages.map((m) => m.id),
      model: this.options.model,
      promptVersion: this.options.promptVersion,
      extractedAt: new Date(now).toISOString(),
      usage,
      candidates: storedCandidates(segment.segmentId, candidates, messages, normalizeTopic),
    };
    // By the first message: the earliest of those it cites to expire, at the same retention.
    if (resultRetentionMs !== undefined) {
      result.expiresAt = expirySeconds(segment.first.ts, resultRetentionMs, now);
    }
    return result;
  }
}

/**
 * A range over the turns the extractor was shown as a range over the segment's messages; null
 * when the extractor gave none or one outside those turns.
 */
function messageRange(
  range: Candidate["turnRange"],
  shown: readonly number[],
): Candidate["turnRange"] {
  if (range === null) return null;
  const first = shown[range[0]];
  const last = shown[range[1]];
  return first === undefined || last === undefined || last < first ? null : [first, last];
}

/** The topic index entries of a result, with when their evidence was said. */
function topicSupports(result: SegmentResult, messages: readonly InlineMessage[]): TopicSupport[] {
  return result.candidates.map((candidate) => {
    const range = candidate.turnRange;
    return range === null
      ? supportOf(result, candidate, result.first.ts, result.last.ts)
      : supportOf(result, candidate, messages[range[0]].ts, messages[range[1]].ts);
  });
}

function already(result: SegmentResult): ExtractionOutcome {
  return {
    status: "already-extracted",
    result,
    attempt: { ...NO_CALLS },
    reusedWindows: 0,
  };
}

function subtract(total: SegmentUsage, part: SegmentUsage): SegmentUsage {
  return {
    calls: total.calls - part.calls,
    inputTokens: total.inputTokens - part.inputTokens,
    outputTokens: total.outputTokens - part.outputTokens,
    cacheReadTokens: total.cacheReadTokens - part.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens - part.cacheWriteTokens,
  };
}
