/**
 * What stands between extraction and the model provider: the daily token budget (a segment
 * waits instead of spending past it) and a circuit breaker (after a run of provider failures,
 * no calls for a cool-down). Both refuse a call before it is made, with an error the consumer
 * reads as a wait, not as one of the segment's attempts.
 */

import { parseDuration } from "../../base/duration/index.js";
import { EXTRACT_DEFAULTS } from "../config/config.js";
import { BudgetPausedError, CircuitOpenError } from "../errors.js";
import {
  type ChatJSONOptions,
  InvalidModelOutputError,
  type LLM,
  LLMError,
  type LLMUsage,
} from "../extraction/index.js";
import type { SpendCounter } from "../store/ledger.js";
import { DEPLOYMENT_PARTITION } from "../store/schema/items.js";
import type { Turn } from "../windows/index.js";
import { isAuthFailure } from "./retry.js";

const DAY_MS = 86_400_000;

/** The UTC day of `ms`: `2026-01-31`. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export interface TokenBudgetOptions {
  counter: SpendCounter;
  /** Input and output tokens all channels may spend per UTC day. */
  daily: number;
  /** Input and output tokens one channel may spend per UTC day (default: no such limit). */
  perChannel?: number;
  now?: () => number;
}

/**
 * A daily token budget, per deployment and optionally per channel, kept as atomic counters in
 * the results table. A call is refused once a budget is reached; calls already in flight finish
 * and are counted, so a day may end a few calls over.
 */
export class TokenBudget {
  private readonly now: () => number;

  constructor(private readonly options: TokenBudgetOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Throws a {@link BudgetPausedError} when today's budget (or the channel's) is spent. */
  async check(channel: string): Promise<void> {
    const now = this.now();
    const day = utcDay(now);
    const resumesAt = Date.parse(day) + DAY_MS;
    const { counter, daily, perChannel } = this.options;
    const total = await counter.spent(DEPLOYMENT_PARTITION, day);
    if (total >= daily) throw new BudgetPausedError("deployment", daily, total, resumesAt);
    if (perChannel !== undefined) {
      const own = await counter.spent(channel, day);
      if (own >= perChannel) throw new BudgetPausedError("channel", perChannel, own, resumesAt);
    }
  }

  /** Counts an answered call's input and output tokens, today, for the deployment and channel. */
  async record(channel: string, usage: LLMUsage): Promise<void> {
    const tokens = usage.inputTokens + usage.outputTokens;
    if (tokens <= 0) return;
    const day = utcDay(this.now());
    await this.options.counter.add(DEPLOYMENT_PARTITION, day, tokens);
    if (this.options.perChannel !== undefined) {
      await this.options.counter.add(channel, day, tokens);
    }
  }
}

export interface CircuitBreakerOptions {
  /** Provider failures in a row that open the breaker (default 5, `BREAKER_FAILURES`). */
  failures?: number;
  /** How long it stays open before a call may try again (default 5 minutes, `BREAKER_COOLDOWN`). */
  cooldownMs?: number;
  now?: () => number;
}

/**
 * A circuit breaker over the provider's failures, per process (a Lambda execution environment):
 * `failures` in a row open it for `cooldownMs`; then calls may try again, and the next failure
 * opens it again at once while a success closes it.
 */
export class CircuitBreaker {
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;
  private failuresInRow = 0;
  private openUntil = 0;

  constructor(options: CircuitBreakerOptions = {}) {
    this.threshold = options.failures ?? Number(EXTRACT_DEFAULTS.BREAKER_FAILURES);
    this.cooldownMs = options.cooldownMs ?? parseDuration(EXTRACT_DEFAULTS.BREAKER_COOLDOWN);
    this.now = options.now ?? Date.now;
  }

  /** Whether calls are refused now. */
  get open(): boolean {
    return this.now() < this.openUntil;
  }

  /** Throws a {@link CircuitOpenError} while the breaker is open. */
  check(): void {
    if (this.open) throw new CircuitOpenError(this.failuresInRow, this.openUntil);
  }

  success(): void {
    this.failuresInRow = 0;
  }

  /** Counts a provider failure; resolves to whether this one opened the breaker. */
  failure(): boolean {
    this.failuresInRow++;
    if (this.failuresInRow < this.threshold || this.open) return false;
    this.openUntil = this.now() + this.cooldownMs;
    return true;
  }
}

/**
 * Whether a failed call says the provider is failing (throttled past the retries, 5xx, a
 * timeout, unreachable, refusing the credentials), not the request or the caller (an abort, a
 * bad request, a reply that is not JSON).
 */
function isProviderFailure(error: unknown): boolean {
  return (
    error instanceof LLMError &&
    error.kind !== "aborted" &&
    (error.retryable || isAuthFailure(error))
  );
}

export interface GuardedLLMOptions {
  budget?: TokenBudget;
  breaker?: CircuitBreaker;
  /** The channel the calls are for (its own budget). */
  channel: string;
  /** Told when the breaker opens, and of every 401/403 (to refetch the key). */
  onOpen?: () => void;
  onAuthFailure?: (error: LLMError) => void;
  /**
   * Told when an answered call's tokens could not be counted: the reply is kept (it is paid
   * for), the day's count is short by it.
   */
  onCountError?: (error: unknown) => void;
}

/** `llm` behind the budget and the breaker: each call checked before, and counted after. */
export function guardedLLM(llm: LLM, options: GuardedLLMOptions): LLM {
  const { budget, breaker, channel } = options;
  return {
    async chatJSON(messages: readonly Turn[], call: ChatJSONOptions = {}): Promise<unknown> {
      breaker?.check();
      await budget?.check(channel);
      // Tokens are counted as the adapter reports them, also for a reply that is not JSON.
      const counted: Promise<void>[] = [];
      try {
        const reply = await llm.chatJSON(messages, {
          ...call,
          onUsage: (usage, info) => {
            if (budget) {
              counted.push(budget.record(channel, usage).catch((e) => options.onCountError?.(e)));
            }
            call.onUsage?.(usage, info);
          },
        });
        breaker?.success();
        return reply;
      } catch (error) {
        if (isAuthFailure(error)) options.onAuthFailure?.(error as LLMError);
        if (isProviderFailure(error)) {
          if (breaker?.failure()) options.onOpen?.();
        } else if (error instanceof InvalidModelOutputError) {
          // The provider answered: it is up, whatever the reply was.
          breaker?.success();
        }
        throw error;
      } finally {
        await Promise.all(counted);
      }
    },
  };
}
