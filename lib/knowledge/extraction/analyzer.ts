import { slidingWindowSpans, splitNonPrefixWindows, splitPrefixWindows } from "../windows/index.js";
import {
  addTrimmed,
  boundCandidate,
  countTrimmed,
  cutText,
  DEFAULT_MAX_CANDIDATES,
  DEFAULT_MAX_TURN_CHARS,
  MAX_QUESTIONS,
} from "./bounds/bounds.js";
import { dedupeCandidates, normalizeTopic } from "./candidates.js";
import { splitWhileTooLong } from "./context-split.js";
import type { Extraction, ExtractionTurn, ExtractOptions, Extractor } from "./extractor.js";
import { additionalPrompt, extractPrompt, type Prompt, replySchema } from "./prompts/prompts.js";
import { type AuthoredTurn, mapTurnRange, renderIndices, renderTurns } from "./prompts/render.js";
import { boundQuestions, dedupeQuestions, placeQuestions } from "./questions.js";
import { askReply, type WireReply } from "./reply.js";
import {
  positiveOr,
  ROUTES,
  type Route,
  replyAwareSlidingWindows,
  type Window,
  withSuffixOffsets,
} from "./routes.js";
import type {
  AnalyzeOptions,
  Candidate,
  LLM,
  QuestionCandidate,
  Trimmed,
  WindowOutput,
  WindowUsage,
} from "./types.js";
import { addCall, NO_CALLS } from "./usage.js";

export { type Route, replyTargets, windowCount } from "./routes.js";

export interface AnalyzerOptions {
  /** Default `prefix`; an unknown route is a RangeError. */
  route?: Route;
  /** User turns per window step (default 5; non-positive values fall back to it). */
  prefixStep?: number;
  /** Windows kept per transcript, the last ones (default 8; non-positive values fall back to it). */
  maxWindows?: number;
  /** Model calls in flight at once (default 4; non-positive values fall back to it). */
  maxConcurrency?: number;
  /**
   * Candidates kept per window, the first in the model's order; the rest are dropped and counted
   * (default 20; non-positive values fall back to it: there is always a cap).
   */
  maxCandidates?: number;
  /** Candidates under this confidence are dropped (default 0.3; non-positive values fall back to it). */
  minConfidence?: number;
  /** Ask the model whether each topic deserves a wiki page (default false). */
  selective?: boolean;
  /** The `sliding` route's window size and overlap, in turns (defaults 20 and 2). */
  windowSize?: number;
  overlap?: number;
  /**
   * Characters of a turn's text a prompt shows; longer texts are cut (with an ellipsis) and
   * counted (default 4000; non-positive values fall back to it).
   */
  maxTurnChars?: number;
}

/** Candidates, questions and what the bounds cut on the way. */
interface Analysis {
  candidates: Candidate[];
  questions: QuestionCandidate[];
  trimmed: Trimmed;
}

const NOTHING = (): Analysis => ({ candidates: [], questions: [], trimmed: {} });

const DEFAULTS = { prefixStep: 5, maxWindows: 8, maxConcurrency: 4, minConfidence: 0.3 };

/**
 * Extracts candidate topics from a transcript with an LLM, per the route: windows are analyzed at
 * most `maxConcurrency` at a time, their candidates filtered by confidence, capped per window and
 * held to the field bounds (before a reply is stored), mapped back to the transcript's turns,
 * merged in window order and deduplicated. Any failure rejects (and aborts the calls still
 * running): a failure never reads as "no candidates".
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
  private readonly maxTurnChars: number;

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
    const { prefixStep, maxWindows, maxConcurrency, minConfidence } = DEFAULTS;
    this.prefixStep = positiveOr("prefixStep", options.prefixStep, prefixStep, true);
    this.maxWindows = positiveOr("maxWindows", options.maxWindows, maxWindows, true);
    this.maxConcurrency = positiveOr(
      "maxConcurrency",
      options.maxConcurrency,
      maxConcurrency,
      true,
    );
    this.minConfidence = positiveOr("minConfidence", options.minConfidence, minConfidence, false);
    this.maxCandidates = positiveOr(
      "maxCandidates",
      options.maxCandidates,
      DEFAULT_MAX_CANDIDATES,
      true,
    );
    this.maxTurnChars = positiveOr(
      "maxTurnChars",
      options.maxTurnChars,
      DEFAULT_MAX_TURN_CHARS,
      true,
    );
    this.selective = options.selective ?? false;
    this.windowSize = options.windowSize ?? 20;
    this.overlap = options.overlap ?? 2;
    // The sliding route's settings are checked now, not on the first transcript.
    slidingWindowSpans(0, this.windowSize, this.overlap);
  }

  /**
   * The extractor seam: each turn becomes the transcript turn the model reads (its role, its
   * author and its text, rendered apart), then {@link analyze}; the answer says what the bounds
   * cut. Keeps no statistics.
   */
  async extract(
    turns: readonly ExtractionTurn[],
    options: ExtractOptions = {},
  ): Promise<Extraction> {
    const { statistics: _statistics, channel: _channel, ...analyze } = options;
    const { candidates, questions, trimmed } = await this.run(turns.map(transcriptTurn), analyze);
    return Object.keys(trimmed).length === 0
      ? { candidates, questions }
      : { candidates, questions, trimmed };
  }

  /**
   * The transcript's candidates. With `outputs`, a window whose prompt has a stored reply is not
   * asked again, and each newly accepted reply is stored before the merge.
   */
  async analyze(
    turns: readonly AuthoredTurn[],
    options: AnalyzeOptions = {},
  ): Promise<Candidate[]> {
    return (await this.run(turns, options)).candidates;
  }

  private async run(turns: readonly AuthoredTurn[], options: AnalyzeOptions): Promise<Analysis> {
    options.signal?.throwIfAborted();
    const trimmed: Trimmed = {};
    if (turns.length === 0) return NOTHING();
    const shown = turns.map((turn) => {
      const content = cutText(turn.content, this.maxTurnChars);
      if (content === turn.content) return turn;
      countTrimmed(trimmed, "turnTexts");
      return { ...turn, content };
    });
    const merged = await this.windows(shown, options);
    addTrimmed(trimmed, merged.trimmed);
    return { ...merged, trimmed };
  }

  private async windows(
    turns: readonly AuthoredTurn[],
    options: AnalyzeOptions,
  ): Promise<Analysis> {
    const whole = { turns, offset: 0 };
    switch (this.route) {
      case "full":
        return this.analyzeWindows([whole], false, options);
      case "full2": {
        const first = await this.extractWindow(whole, false, 0, options);
        const added = await this.extractAdditional(turns, first.candidates, options);
        const trimmed = {};
        addTrimmed(trimmed, first.trimmed, added.trimmed);
        return {
          candidates: dedupeCandidates([...first.candidates, ...added.candidates]),
          questions: dedupeQuestions([...first.questions, ...added.questions]),
          trimmed,
        };
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
          replyAwareSlidingWindows(turns, this.windowSize, this.overlap),
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
    windows: Window<AuthoredTurn>[],
    includeTool: boolean,
    options: AnalyzeOptions,
  ): Promise<Analysis> {
    const { signal } = options;
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    const results: Analysis[] = [];
    const shared = includeTool
      ? renderTurns(windows[0]?.turns ?? [], true, options.context).length
      : 0;
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
    const trimmed = {};
    addTrimmed(trimmed, ...results.map((r) => r.trimmed));
    return {
      candidates: dedupeCandidates(results.flatMap((r) => r.candidates)),
      questions: dedupeQuestions(results.flatMap((r) => r.questions)),
      trimmed,
    };
  }

  /**
   * One window's candidates; an empty render makes no call. A window longer than the model's
   * context is asked in halves (which share no prefix with the other windows).
   */
  private extractWindow(
    window: Window<AuthoredTurn>,
    includeTool: boolean,
    sharedExcerpt: number,
    options: AnalyzeOptions,
  ): Promise<Analysis> {
    const ask = async (part: Window<AuthoredTurn>, whole: boolean) => {
      const excerpt = renderTurns(part.turns, includeTool, options.context);
      if (excerpt === "") return NOTHING();
      const prompt = extractPrompt(excerpt, this.selective);
      const shared = whole ? sharedExcerpt : 0;
      const output = await this.answer(prompt, prompt.excerptAt + shared, options);
      return this.keep(output, part, includeTool);
    };
    return splitWhileTooLong(window, ask, joinAnalyses);
  }

  /** The `full2` second pass: topics the first pass did not find. */
  private async extractAdditional(
    turns: readonly AuthoredTurn[],
    first: readonly Candidate[],
    options: AnalyzeOptions,
  ): Promise<Analysis> {
    const existing = first.map((c) => normalizeTopic(c.topic)).filter((t) => t !== "");
    const ask = async (part: Window<AuthoredTurn>) => {
      const excerpt = renderTurns(part.turns, false, options.context);
      if (excerpt === "") return NOTHING();
      const prompt = additionalPrompt(excerpt, existing, this.selective);
      const output = await this.answer(prompt, prompt.excerptAt, options);
      return this.keep(output, part, false);
    };
    return splitWhileTooLong({ turns, offset: 0 }, ask, joinAnalyses);
  }

  /** The stored reply to this prompt, or the model's, stored with what it cost and what was cut. */
  private async answer(
    prompt: Prompt,
    cachePrefix: number,
    options: AnalyzeOptions,
  ): Promise<WindowOutput> {
    const stored = await options.outputs?.get(prompt.text);
    if (stored !== undefined) return stored;
    const usage: WindowUsage = { ...NO_CALLS };
    const wire = await askReply(this.llm, prompt, cachePrefix, replySchema(this.selective), {
      ...options,
      onUsage: (call, details) => {
        addCall(usage, call);
        options.onUsage?.(call, details);
      },
    });
    const output: WindowOutput = { ...this.bound(wire), usage };
    await options.outputs?.put(prompt.text, output);
    return output;
  }

  /**
   * The reply held to its bounds before it is stored: the confidence filter, the first
   * `maxCandidates` of what is left (the rest dropped and counted), the first questions, each
   * field cut to its length; questions that could not be read counted.
   */
  private bound(wire: WireReply): Omit<WindowOutput, "usage"> {
    const trimmed: Trimmed = {};
    countTrimmed(trimmed, "questions", wire.unreadQuestions);
    const questions = boundQuestions(wire.questions, MAX_QUESTIONS, trimmed);
    const confident = wire.candidates.filter((c) => c.confidence >= this.minConfidence);
    countTrimmed(trimmed, "candidates", confident.length - this.maxCandidates);
    const candidates = confident
      .slice(0, this.maxCandidates)
      .map((c) => boundCandidate(c, trimmed));
    return Object.keys(trimmed).length === 0
      ? { candidates, questions }
      : { candidates, questions, trimmed };
  }

  /**
   * A window's bounded reply with its turn numbers mapped to the transcript (a reply stored
   * before questions were asked for has none).
   */
  private keep(output: WindowOutput, window: Window, includeTool: boolean): Analysis {
    const indexes = renderIndices(window.turns, includeTool);
    const trimmed = { ...output.trimmed };
    return {
      candidates: output.candidates.map((c) => ({
        ...c,
        turnRange: mapTurnRange(c.turnRange, indexes, window.offset),
      })),
      questions: placeQuestions(output.questions ?? [], indexes, window.offset, trimmed),
      trimmed,
    };
  }
}

/** The halves of a window asked apart, as one window's analysis. */
function joinAnalyses(parts: Analysis[]): Analysis {
  const trimmed = {};
  addTrimmed(trimmed, ...parts.map((p) => p.trimmed));
  return {
    candidates: parts.flatMap((p) => p.candidates),
    questions: parts.flatMap((p) => p.questions),
    trimmed,
  };
}

/**
 * A chat message as the model reads it: its role, its author apart from its text, and whom it
 * answers (by id, which the render turns into a turn number).
 */
function transcriptTurn(turn: ExtractionTurn): AuthoredTurn {
  const shown: AuthoredTurn = { role: turn.role, content: turn.text };
  if (turn.author !== undefined) shown.author = turn.author;
  if (turn.id !== undefined) shown.id = turn.id;
  if (turn.replyTo !== undefined) shown.replyTo = turn.replyTo;
  return shown;
}
