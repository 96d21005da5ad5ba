/**
 * Discord's rate limits as a client must keep them (developers/topics/rate-limits): a global cap
 * per bot (50 requests/s), and per-route buckets learned from `X-RateLimit-Bucket`, each with
 * its `Remaining` and `Reset-After`, per major parameter (the channel or guild id).
 */
import type { Clock } from "./clock.js";

/**
 * The global cap's window: a second, plus a margin for the network, because Discord counts a
 * request when it arrives, and a slow one followed by a fast one a second apart can arrive closer.
 */
const GLOBAL_WINDOW_MS = 1050;

interface BucketState {
  remaining: number;
  resetAt: number;
}

export class RateLimits {
  /** Start times of the last `perSecond` requests: the window the global cap is kept over. */
  private readonly starts: number[] = [];
  private globalUntil = 0;
  /** Route (with its major parameter) → the bucket hash Discord named for it. */
  private readonly hashes = new Map<string, string>();
  private readonly buckets = new Map<string, BucketState>();

  constructor(
    private readonly clock: Clock,
    private readonly perSecond: number,
  ) {}

  private bucketKey(route: string, major: string): string {
    const hash = this.hashes.get(route);
    return hash === undefined ? `route:${route}:${major}` : `${hash}:${major}`;
  }

  /** How long to wait before a request of `route` may start (0: now). */
  waitFor(route: string, major: string): number {
    const now = this.clock.now();
    let wait = Math.max(0, this.globalUntil - now);
    if (this.starts.length >= this.perSecond) {
      const oldest = this.starts[this.starts.length - this.perSecond];
      wait = Math.max(wait, oldest + GLOBAL_WINDOW_MS - now);
    }
    const bucket = this.buckets.get(this.bucketKey(route, major));
    if (bucket !== undefined && bucket.remaining <= 0) wait = Math.max(wait, bucket.resetAt - now);
    return wait;
  }

  /** A request starts now: it counts against the global window and its bucket. */
  started(route: string, major: string): void {
    this.starts.push(this.clock.now());
    if (this.starts.length > this.perSecond * 2) this.starts.splice(0, this.perSecond);
    const bucket = this.buckets.get(this.bucketKey(route, major));
    if (bucket !== undefined) bucket.remaining -= 1;
  }

  /** What a response's headers say of its bucket. */
  observe(route: string, major: string, headers: Headers): void {
    const hash = headers.get("x-ratelimit-bucket");
    if (hash) this.hashes.set(route, hash);
    const remaining = Number(headers.get("x-ratelimit-remaining"));
    const resetAfter = Number(headers.get("x-ratelimit-reset-after"));
    if (headers.has("x-ratelimit-remaining") && Number.isFinite(remaining)) {
      this.buckets.set(this.bucketKey(route, major), {
        remaining,
        resetAt: this.clock.now() + (Number.isFinite(resetAfter) ? resetAfter * 1000 : 1000),
      });
    }
  }

  /** A 429: the global limit or the route's bucket is closed for `retryAfterMs`. */
  limited(route: string, major: string, retryAfterMs: number, global: boolean): void {
    const until = this.clock.now() + retryAfterMs;
    if (global) {
      this.globalUntil = Math.max(this.globalUntil, until);
      return;
    }
    this.buckets.set(this.bucketKey(route, major), { remaining: 0, resetAt: until });
  }
}
