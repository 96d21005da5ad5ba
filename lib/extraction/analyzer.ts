import {
  slidingWindows,
  splitNonPrefixWindows,
  splitPrefixWindows,
  type Turn,
} from "../windows/index.js";
import { dedupeCandidates, normalizeTopic } from "./candidates.js";
import { InvalidModelOutputError } from "./errors.js";
import type { Extraction, ExtractionTurn, ExtractOptions, Extractor } from "./extractor.js";
import { additionalPrompt, extractPrompt, type Prompt, replySchema } from "./prompts.js";
import { mapTurnRange, renderIndices, renderTurns } from "./render.js";
import { readReply, type WireCandidate } from "./reply.js";
import type { AnalyzeOptions, Candidate, LLM, PromptTurn, WindowUsage } from "./types.js";
import { addCall, NO_CALLS } from "./usage.js";

/**
 * How a transcript is cut into what the model sees:
 * - `prefix`: growing prefix windows every `prefixStep` user turns, tool output included;
 * - `non_prefix`: non-overlapping windows every `prefixStep` user turns;
 * - `full`: the whole transcript at once; `full2`: the same, then a pass for what was missed;
 * - `sliding`: windows of `windowSize` turns overlapping by `overlap`.
 * All but `prefix` show user and assistant turns only.
 */
export type Route = "prefix" | "non_prefix" | "full" | "full2" | "sliding";

const ROUTES: readonly Route[] = ["prefix", "non_prefix", "full", "full2", "sliding"];

/** What decides how many windows a route cuts: the transcript's length and the window settings. */
export interface WindowSizing {
  /** Turns of the transcript (a segment has one per message). */
  turns: number;
  windowSize: number;
  overlap: number;
  prefixStep: number;
  maxWindows: number;
}

/**
 * The most windows (prompts) `route` asks the model about for a transcript of `sizing.turns`
 * turns, whatever their roles: as many as the splitters cut when every turn is a user turn, the
 * most there can be. `sliding`: ceil((turns - overlap) / (windowSize - overlap)), at least one;
 * `prefix` and `non_prefix`: one per `prefixStep` turns, the last holding the rest, at most
 * `maxWindows`; `full` one; `full2` two passes over the whole. No turns, no windows. Sizes as
 * the analyzer takes them: positive (the deployment's reader checks them).
 */
export function windowCount(route: Route, sizing: WindowSizing): number {
  const { turns, windowSize, overlap, prefixStep, maxWindows } = sizing;
  if (turns <= 0) return 0;
  switch (route) {
    case "sliding":
      return Math.max(1, Math.ceil((turns - overlap) / (windowSize - overlap)));
    case "prefix":
    case "non_prefix":
      return Math.min(maxWindows, Math.ceil(turns / prefixStep));
    case "full":
      return 1;
    case "full2":
      return 2;
  }
}

export interface AnalyzerOptions {
  /** Default `prefix`; an unknown route is a RangeError. */
  route?: Route;
  /** User turns per window step (default 5; non-positive values fall back to it). */
  prefixStep?: number;
  /** Windows kept per transcript, the last ones (default 8; non-positive values fall back to it). */
  maxWindows?: number;
  /** Model calls in flight at once (default 4; non-positive values fall back to it). */
  maxConcurrency?: number;
  /** Candidates kept per window, the first in the model's order (default 0: no cap). */
  maxCandidates?: number;
  /** Candidates under this confidence are dropped (default 0.3; non-positive values fall back to it). */
  minConfidence?: number;
  /** Ask the model whether each topic deserves a wiki page (default false). */
  selective?: boolean;
  /** The `sliding` route's window size and overlap, in turns (defaults 20 and 2). */
  windowSize?: number;
  overlap?: number;
}

/** A window of the transcript and where it starts in it. */
interface Window {
  turns: readonly Turn[];
  offset: number;
}

const DEFAULTS = { prefixStep: 5, maxWindows: 8, maxConcurrency: 4, minConfidence: 0.3 };

/**
 * Extracts candidate topics from a transcript with an LLM, per the route: windows are analyzed at
 * most `maxConcurrency` at a time, their candidates filtered by confidence, mapped back to the
 * transcript's turns, capped per window, merged in window order and deduplicated. Any failure
 * rejects (and aborts the calls still running): a failure never reads as "no candidates".
 */
export class Analyzer implements Extractor {
  private readonly route: Route;
  private readonly prefixStep: number;
  private readonly maxWindows: number;
  private readonly maxConcurrency: number;
  private readonly maxCandidates: number;
  private readonly minConfidence: number;
  private readonly selective: boolean;
  private readonly windowSize: number;
  private readonly overlap: number;

  constructor(
    private readonly llm: LLM,
    options: AnalyzerOptions = {},
  ) {
    this.route = options.route ?? "prefix";
    if (!ROUTES.includes(this.route)) {
      throw new RangeError(
        `route must be one of ${ROUTES.join(", ")} (got ${JSON.stringify(options.route)})`,
      );
    }
    this.prefixStep = positiveOr("prefixStep", options.prefixStep, DEFAULTS.prefixStep, true);
    this.maxWindows = positiveOr("maxWindows", options.maxWindows, DEFAULTS.maxWindows, true);
    this.maxConcurrency = positiveOr(
      "maxConcurrency",
      options.maxConcurrency,
      DEFAULTS.maxConcurrency,
      true,
    );
    this.minConfidence = positiveOr(
      "minConfidence",
      options.minConfidence,
      DEFAULTS.minConfidence,
      false,
    );
    this.maxCandidates = Math.max(0, options.maxCandidates ?? 0);
    this.selective = options.selective ?? false;
    this.windowSize = options.windowSize ?? 20;
    this.overlap = options.overlap ?? 2;
    // The sliding route's settings are checked now, not on the first transcript.
    slidingWindows([], this.windowSize, this.overlap);
  }

  /**
   * The extractor seam: each turn becomes the transcript turn the model reads (its role, and its
   * text as `author: text` when it has an author), then {@link analyze}. Keeps no statistics.
   */
  async extract(
    turns: readonly ExtractionTurn[],
    options: ExtractOptions = {},
  ): Promise<Extraction> {
    const { statistics: _statistics, channel: _channel, ...analyze } = options;
    return { candidates: await this.analyze(turns.map(transcriptTurn), analyze) };
  }

  /**
   * The transcript's candidates. With `outputs`, a window whose prompt has a stored reply is not
   * asked again, and each newly accepted reply is stored before the merge.
   */
  async analyze(turns: readonly Turn[], options: AnalyzeOptions = {}): Promise<Candidate[]> {
    options.signal?.throwIfAborted();
    if (turns.length === 0) return [];
    switch (this.route) {
      case "full":
        return dedupeCandidates(await this.extractWindow({ turns, offset: 0 }, false, 0, options));
      case "full2": {
        const first = await this.extractWindow({ turns, offset: 0 }, false, 0, options);
        const added = await this.extractAdditional(turns, first, options);
        return dedupeCandidates([...first, ...added]);
      }
      case "prefix":
        return this.analyzeWindows(
          splitPrefixWindows(turns, this.prefixStep, this.maxWindows).map((w) => ({
            turns: w,
            offset: 0,
          })),
          true,
          options,
        );
      case "non_prefix":
        return this.analyzeWindows(
          withSuffixOffsets(
            turns.length,
            splitNonPrefixWindows(turns, this.prefixStep, this.maxWindows),
          ),
          false,
          options,
        );
      case "sliding":
        return this.analyzeWindows(
          withOverlapOffsets(slidingWindows(turns, this.windowSize, this.overlap), this.overlap),
          false,
          options,
        );
    }
  }

  /**
   * Runs the windows, at most `maxConcurrency` at once, and merges their candidates in window
   * order. On the prefix route the shortest window goes first and alone: the rest share its
   * prompt as a prefix, which a provider can only serve from its cache once that first request
   * has been answered.
   */
  private async analyzeWindows(
    windows: Window[],
    includeTool: boolean,
    options: AnalyzeOptions,
  ): Promise<Candidate[]> {
    const { signal } = options;
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    const results: Candidate[][] = [];
    const shared = includeTool ? renderTurns(windows[0]?.turns ?? [], true).length : 0;
    const run = async (i: number) => {
      results[i] = await this.extractWindow(windows[i], includeTool, shared, {
        ...options,
        signal: controller.signal,
      });
    };
    try {
      let next = 0;
      if (includeTool && windows.length > 1) await run(next++);
      await new Promise<void>((resolve, reject) => {
        let active = 0;
        let failed = false;
        const launch = () => {
          if (failed) return;
          if (next >= windows.length && active === 0) return resolve();
          while (active < this.maxConcurrency && next < windows.length) {
            const index = next++;
            active++;
            run(index).then(
              () => {
                active--;
                launch();
              },
              (error) => {
                failed = true;
                controller.abort(error);
                reject(error);
              },
            );
          }
        };
        launch();
      });
    } finally {
      signal?.removeEventListener("abort", abort);
    }
    return dedupeCandidates(results.flat());
  }

  /** One window's candidates; an empty render makes no call. */
  private async extractWindow(
    window: Window,
    includeTool: boolean,
    sharedExcerpt: number,
    options: AnalyzeOptions,
  ): Promise<Candidate[]> {
    const excerpt = renderTurns(window.turns, includeTool);
    if (excerpt === "") return [];
    const prompt = extractPrompt(excerpt, this.selective);
    const wire = await this.answer(prompt, prompt.excerptAt + sharedExcerpt, options);
    return this.keep(wire, window, includeTool);
  }

  /** The `full2` second pass: topics the first pass did not find. */
  private async extractAdditional(
    turns: readonly Turn[],
    first: readonly Candidate[],
    options: AnalyzeOptions,
  ): Promise<Candidate[]> {
    const excerpt = renderTurns(turns, false);
    if (excerpt === "") return [];
    const existing = first.map((c) => normalizeTopic(c.topic)).filter((t) => t !== "");
    const prompt = additionalPrompt(excerpt, existing, this.selective);
    const wire = await this.answer(prompt, prompt.excerptAt, options);
    return this.keep(wire, { turns, offset: 0 }, false);
  }

  /** The stored reply to this prompt, or the model's, stored with what it cost. */
  private async answer(
    prompt: Prompt,
    cachePrefix: number,
    options: AnalyzeOptions,
  ): Promise<WireCandidate[]> {
    const stored = await options.outputs?.get(prompt.text);
    if (stored !== undefined) return stored.candidates;
    const usage: WindowUsage = { ...NO_CALLS };
    const candidates = await this.ask(prompt, cachePrefix, {
      ...options,
      onUsage: (call, details) => {
        addCall(usage, call);
        options.onUsage?.(call, details);
      },
    });
    await options.outputs?.put(prompt.text, { candidates, usage });
    return candidates;
  }

  /**
   * Asks the model and reads its reply; a reply that is not the JSON asked for is answered once
   * with what is wrong with it, and a second such reply is an {@link InvalidModelOutputError}.
   */
  private async ask(
    prompt: Prompt,
    cachePrefix: number,
    options: AnalyzeOptions,
  ): Promise<WireCandidate[]> {
    const schema = replySchema(this.selective);
    const request: PromptTurn[] = [{ role: "user", content: prompt.text, cachePrefix }];
    let attempt = await this.reply(request, schema, options);
    if ("candidates" in attempt) return attempt.candidates;
    const repair: PromptTurn[] = [
      ...request,
      { role: "assistant", content: attempt.raw },
      {
        role: "user",
        content: `That reply was not valid: ${attempt.problem}. Answer again with only the JSON object described above.`,
      },
    ];
    options.onRepair?.();
    attempt = await this.reply(repair, schema, options);
    if ("candidates" in attempt) return attempt.candidates;
    throw new InvalidModelOutputError(`${attempt.problem} (after one repair request)`, attempt.raw);
  }

  private async reply(
    messages: PromptTurn[],
    schema: Record<string, unknown>,
    options: AnalyzeOptions,
  ): Promise<{ candidates: WireCandidate[] } | { problem: string; raw: string }> {
    let value: unknown;
    try {
      value = await this.llm.chatJSON(messages, {
        schema,
        signal: options.signal,
        onUsage: options.onUsage,
      });
    } catch (error) {
      if (error instanceof InvalidModelOutputError)
        return { problem: error.reason, raw: error.raw };
      throw error;
    }
    const read = readReply(value);
    return "candidates" in read ? read : { problem: read.problem, raw: JSON.stringify(value) };
  }

  /** Confidence filter, turn ranges mapped to the transcript, then the per-window cap. */
  private keep(wire: readonly WireCandidate[], window: Window, includeTool: boolean): Candidate[] {
    const indexes = renderIndices(window.turns, includeTool);
    const kept = wire
      .filter((c) => c.confidence >= this.minConfidence)
      .map((c) => ({ ...c, turnRange: mapTurnRange(c.turnRange, indexes, window.offset) }));
    return this.maxCandidates > 0 ? kept.slice(0, this.maxCandidates) : kept;
  }
}

/**
 * `value` when positive, else `fallback` (the original's defaults); a RangeError naming `name`
 * for a value that is not a finite number (or, with `integer`, not an integer).
 */
function positiveOr(
  name: string,
  value: number | undefined,
  fallback: number,
  integer: boolean,
): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be ${integer ? "an integer" : "a number"} (got ${value})`);
  }
  return value > 0 ? value : fallback;
}

/** A chat message as the model reads it: `author: text` when it has an author, as the user. */
function transcriptTurn(turn: ExtractionTurn): Turn {
  return {
    role: turn.role,
    content: turn.author === undefined ? turn.text : `${turn.author}: ${turn.text}`,
  };
}

/** Non-prefix windows join to the end of the transcript: each starts where the rest begins. */
function withSuffixOffsets(length: number, windows: Turn[][]): Window[] {
  let end = length;
  const placed: Window[] = [];
  for (let i = windows.length - 1; i >= 0; i--) {
    end -= windows[i].length;
    placed.unshift({ turns: windows[i], offset: end });
  }
  return placed;
}

/** Sliding windows each start `overlap` turns before the previous one ended. */
function withOverlapOffsets(windows: Turn[][], overlap: number): Window[] {
  let offset = 0;
  return windows.map((turns, i) => {
    if (i > 0) offset += windows[i - 1].length - overlap;
    return { turns, offset };
  });
}
