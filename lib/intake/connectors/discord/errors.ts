/**
 * The Discord poller's error family: a stable `code` and a literal `name` each (bundling renames
 * classes). Messages name the channel, route or setting at fault, never message text.
 */
export class DiscordError extends Error {
  override readonly name: string = "DiscordError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Discord refused the token (401: every later request would be refused too, so the run stops) or
 * the bot's access to a channel (403: that channel stops). Never retried: Discord bans a token's
 * IP after 10,000 invalid requests in 10 minutes.
 */
export class DiscordAuthError extends DiscordError {
  override readonly name: string = "DiscordAuthError";
  constructor(
    readonly status: 401 | 403,
    readonly route: string,
  ) {
    super(
      status === 401 ? "DISCORD_UNAUTHORIZED" : "DISCORD_FORBIDDEN",
      status === 401
        ? `${route}: 401 Unauthorized: the bot token is invalid or revoked; the run stops (fix the secret)`
        : `${route}: 403 Forbidden: the bot lacks VIEW_CHANNEL or READ_MESSAGE_HISTORY here; this channel stops`,
    );
  }
}

/** Still rate limited (429) after the retries a request is allowed. */
export class DiscordRateLimitError extends DiscordError {
  override readonly name: string = "DiscordRateLimitError";
  constructor(
    readonly route: string,
    attempts: number,
  ) {
    super("DISCORD_RATE_LIMITED", `${route}: still 429 after ${attempts} attempts`);
  }
}

/** Any other refusal or failure of a request (404 unknown channel, 5xx after retries, bad JSON). */
export class DiscordHttpError extends DiscordError {
  override readonly name: string = "DiscordHttpError";
  constructor(
    readonly route: string,
    readonly status: number,
    detail: string,
  ) {
    super("DISCORD_HTTP", `${route}: ${status === 0 ? "" : `${status} `}${detail}`);
  }
}

/** The run's deadline would pass before the next request could be made: resume next run. */
export class DiscordDeadlineError extends DiscordError {
  override readonly name: string = "DiscordDeadlineError";
  constructor(route: string) {
    super("DISCORD_DEADLINE", `${route}: not started: the run's deadline is near`);
  }
}

/** A setting of the poller that cannot be used, named. */
export class DiscordConfigError extends DiscordError {
  override readonly name: string = "DiscordConfigError";
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super("DISCORD_CONFIG", `${setting}: ${problem}`);
  }
}
