/**
 * A small Discord REST client over fetch: GET only (what the poller needs), every request under
 * the rate limits (`RateLimits`), 429s waited out as `retry_after` says, 5xx retried a few times,
 * 401/403 never retried (`DiscordAuthError`), and no request started that the run's deadline
 * would cut. After a 401 it refuses every further request itself: the token is bad for all.
 */
import { type Clock, systemClock } from "./clock.js";
import {
  DiscordAuthError,
  DiscordDeadlineError,
  DiscordHttpError,
  DiscordRateLimitError,
} from "./errors.js";
import { RateLimits } from "./rate-limits.js";

const DISCORD_API = "https://discord.com/api/v10";

export interface DiscordRestOptions {
  token: string;
  /** The API's base URL (tests: a scripted server on 127.0.0.1). */
  baseUrl?: string;
  fetch?: typeof fetch;
  clock?: Clock;
  /** The global cap (Discord's is 50 requests/s per bot). */
  perSecond?: number;
  /** Attempts a request gets against 429s and 5xx (default 4). */
  maxAttempts?: number;
  /** Clock time after which no request starts (the run stops and resumes next time). */
  deadline?: number;
  /** How long a request is given (default 10 s): one not started with that much left waits. */
  requestTimeoutMs?: number;
}

/** What the client did, for the run's metrics. */
export interface RestStats {
  requests: number;
  rateLimited: number;
  globalRateLimited: number;
  authFailures: number;
  serverErrors: number;
}

export class DiscordRest {
  readonly stats: RestStats = {
    requests: 0,
    rateLimited: 0,
    globalRateLimited: 0,
    authFailures: 0,
    serverErrors: 0,
  };
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly clock: Clock;
  private readonly limits: RateLimits;
  private readonly maxAttempts: number;
  private readonly requestTimeoutMs: number;
  private unauthorized = false;
  deadline: number;

  constructor(private readonly options: DiscordRestOptions) {
    this.baseUrl = (options.baseUrl ?? DISCORD_API).replace(/\/+$/, "");
    this.fetch = options.fetch ?? globalThis.fetch;
    this.clock = options.clock ?? systemClock;
    this.limits = new RateLimits(this.clock, options.perSecond ?? 50);
    this.maxAttempts = options.maxAttempts ?? 4;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.deadline = options.deadline ?? Number.POSITIVE_INFINITY;
  }

  /**
   * GET `path` (with `query`), as route `route` (the path's template, e.g.
   * `/channels/{id}/messages`) with major parameter `major` for its bucket.
   */
  async get<T>(
    route: string,
    major: string,
    path: string,
    query: Record<string, string | undefined> = {},
  ): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    for (let attempt = 1; ; attempt++) {
      if (this.unauthorized) throw new DiscordAuthError(401, route);
      await this.waitTurn(route, major);
      this.stats.requests += 1;
      let response: Response;
      try {
        const sent = this.fetch(url, {
          headers: {
            authorization: `Bot ${this.options.token}`,
            "user-agent": "DiscordBot (https://github.com/convoseg, 0.1)",
          },
          signal: AbortSignal.timeout(this.requestTimeoutMs),
        });
        response = await (this.clock.track ? this.clock.track(sent) : sent);
      } catch (error) {
        if (attempt >= this.maxAttempts) {
          throw new DiscordHttpError(route, 0, `request failed: ${(error as Error).message}`);
        }
        await this.pause(route, 500 * 2 ** attempt);
        continue;
      }
      this.limits.observe(route, major, response.headers);
      if (response.ok) return (await response.json()) as T;
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        this.stats.authFailures += 1;
        if (response.status === 401) this.unauthorized = true;
        throw new DiscordAuthError(response.status, route);
      }
      if (response.status === 429) {
        const body = (await response.json().catch(() => ({}))) as {
          retry_after?: unknown;
          global?: unknown;
        };
        const global =
          response.headers.get("x-ratelimit-global") === "true" || body.global === true;
        const seconds = retryAfterSeconds(body.retry_after, response.headers.get("retry-after"));
        this.stats.rateLimited += 1;
        if (global) this.stats.globalRateLimited += 1;
        this.limits.limited(route, major, seconds * 1000, global);
        if (attempt >= this.maxAttempts) throw new DiscordRateLimitError(route, attempt);
        continue;
      }
      await response.body?.cancel();
      if (response.status >= 500 && attempt < this.maxAttempts) {
        this.stats.serverErrors += 1;
        await this.pause(route, 500 * 2 ** attempt);
        continue;
      }
      throw new DiscordHttpError(route, response.status, response.statusText || "refused");
    }
  }

  private async waitTurn(route: string, major: string): Promise<void> {
    for (;;) {
      const wait = this.limits.waitFor(route, major);
      if (this.clock.now() + wait + this.requestTimeoutMs > this.deadline) {
        throw new DiscordDeadlineError(route);
      }
      if (wait <= 0) {
        // Counted in the same turn as the check: no other request can slip in between.
        this.limits.started(route, major);
        return;
      }
      await this.clock.sleep(wait);
    }
  }

  private async pause(route: string, ms: number): Promise<void> {
    if (this.clock.now() + ms + this.requestTimeoutMs > this.deadline) {
      throw new DiscordDeadlineError(route);
    }
    await this.clock.sleep(ms);
  }
}

/** A 429 that says nothing usable waits this long: never zero, so never a loop of requests. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/**
 * How long a 429 says to wait, in seconds: the body's `retry_after`, else the `Retry-After`
 * header, each taken only as a finite number of seconds at least 0 (a number or its text); a
 * proxy's or a broken server's other value (`"soon"`, a date, null) waits the default. A NaN
 * would make every comparison with the deadline false and the wait a 1 ms timer: the poller
 * would spin until its function timed out.
 */
function retryAfterSeconds(body: unknown, header: string | null): number {
  for (const value of [body, header]) {
    if (typeof value !== "number" && (typeof value !== "string" || value.trim() === "")) continue;
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  }
  return DEFAULT_RETRY_AFTER_SECONDS;
}
