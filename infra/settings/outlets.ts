/**
 * The outlets wing's settings: the read API (off unless `api`) and its authorizer, the
 * scheduled digest (on unless `digest=false`), its schedule, period, channels and destinations,
 * the deployed search index (off unless `search`), and the ask endpoints (each off until set).
 */

import { DAY_MS, fail, got, SECRET_ARN, type Table } from "./kinds.js";
import { BEDROCK_MODEL_ID } from "./knowledge.js";

const JWT_ISSUER = /^https:\/\/[A-Za-z0-9.-]{1,253}(:\d{1,5})?(\/[\x21-\x7e]{0,500})?$/;
const JWT_AUDIENCES = /^[\x21-\x2b\x2d-\x7e]{1,200}(,[\x21-\x2b\x2d-\x7e]{1,200}){0,9}$/;
/** Names or user ids without commas or control characters, 1 to 200 of them. */
const OPT_OUT = /^[^,\p{Cc}]{1,100}(,[^,\p{Cc}]{1,100}){0,199}$/u;
/** EventBridge's schedule expressions, within what CloudFormation takes (256 characters). */
const SCHEDULE_EXPRESSION =
  /^(cron\([0-9*?,/#LW A-Z-]{9,200}\)|rate\(\d{1,5} (minute|minutes|hour|hours|day|days)\))$/;
/** Channel ids without commas or whitespace, 1 to 100 of them. */
const DIGEST_CHANNELS = /^[^\s,;]{1,256}([,;][^\s,;]{1,256}){0,99}$/;
/** Standard topics only: a `.fifo` name does not match, since Publish to one needs a group id. */
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

/** Discord's application public key: 32 bytes as hex (public: a setting, not a secret). */
const ED25519_PUBLIC_KEY = /^[0-9a-fA-F]{64}$/;
/** A command's name as both platforms take it: lower case, digits, `_` and `-`. */
const COMMAND_NAME = /^[a-z0-9_-]{1,32}$/;
/** A Telegram bot's username, without the `@`. */
const BOT_USERNAME = /^[A-Za-z][A-Za-z0-9_]{3,31}$/;
/**
 * A Titan text embeddings model id (the search index's embedder speaks Titan's request): it goes
 * into the IAM resource ARN, so no wildcard, slash or ARN passes.
 */
const TITAN_EMBEDDINGS_MODEL = /^amazon\.titan-embed-[A-Za-z0-9.-]{1,60}(:\d{1,3})?$/;
/** Channel ids of any platform, comma-separated. */
const ASK_CHANNELS = /^[^\s,]{1,64}(,[^\s,]{1,64}){0,999}$/;
/** `anyone`, or Slack and Discord user ids, comma-separated (1 to 200). */
const ASK_MARKERS = /^(anyone|[A-Z0-9]{2,30}(,[A-Z0-9]{2,30}){0,199})$/;

const askSecret = (what: string) => ({
  pattern: SECRET_ARN,
  rule: `a Secrets Manager secret's full ARN, not the ${what} itself`,
  secret: true,
});
/** An ask endpoint answers from the search index: refused without it. */
const needsSearch = (given: unknown, search: boolean) => {
  if (given !== undefined && !search) fail("answers from the search index: set search=true too");
};

/** A destination of the scheduled digest, refused when `digest=false` turns it off. */
const forDigest = (given: string | undefined, digest: boolean) => {
  if (given !== undefined && !digest) {
    fail("is for the scheduled digest, which digest=false turns off");
  }
};

export const outlets = <V, P>(table: Table<V, P>) =>
  table
    /**
     * Deploy the read API (docs/api.md): an API Gateway HTTP API, IAM-authorized (SigV4) unless
     * apiJwtIssuer names a JWT issuer.
     */
    .flag("api", { default: false })
    /**
     * A JWT authorizer's issuer (an https URL) in place of IAM: Cognito's, Auth0's, your IdP's.
     * Unset: IAM authorization.
     */
    .text("apiJwtIssuer", {
      rule: { pattern: JWT_ISSUER, rule: "an https URL (the JWT issuer, its iss claim)" },
      check: ({ api, apiJwtIssuer }) => {
        if (apiJwtIssuer !== undefined && !api) fail("is for the read API: set api=true too");
      },
    })
    /** The audiences (client ids) a JWT must carry, comma-separated; required with apiJwtIssuer. */
    .text("apiJwtAudience", {
      rule: { pattern: JWT_AUDIENCES, rule: "1 to 10 audiences (client ids), comma-separated" },
      check: ({ apiJwtIssuer, apiJwtAudience }) => {
        if (apiJwtIssuer !== undefined && apiJwtAudience === undefined) {
          fail("must be set with apiJwtIssuer (the audiences a token must carry)");
        }
        if (apiJwtIssuer === undefined && apiJwtAudience !== undefined) {
          fail("is set without apiJwtIssuer: set the issuer too, or neither", "apiJwtAudience");
        }
      },
    })
    /**
     * People never named among the stats route's answerers (they asked not to be): names or
     * user ids as their messages carry them, comma-separated, any case.
     */
    .text("apiStatsOptOut", {
      rule: { pattern: OPT_OUT, rule: "1 to 200 names or user ids, comma-separated" },
      check: ({ api, apiStatsOptOut }) => {
        if (apiStatsOptOut !== undefined && !api) fail("is for the read API: set api=true too");
      },
    })
    /**
     * Deploy the scheduled digest (docs/digest-schedule.md): on `digestSchedule`, the digest of
     * the last `digestPeriod` written to an S3 bucket, posted to Slack with
     * digestSlackWebhookSecret and published to digestSnsTopic. `false` deploys neither the
     * bucket nor the function.
     */
    .flag("digest", { default: true })
    /** When the digest runs: an EventBridge `cron(...)` or `rate(...)` expression, in UTC. */
    .text("digestSchedule", {
      rule: {
        pattern: SCHEDULE_EXPRESSION,
        rule: "an EventBridge schedule expression, such as cron(0 8 ? * MON *) or rate(7 days)",
      },
      default: "cron(0 8 ? * MON *)",
    })
    /** The period a digest covers, ending at the start of the day it runs (UTC), 1d to 31d. */
    .duration("digestPeriod", {
      default: "7d",
      env: { digest: "DIGEST_PERIOD" },
      check: ({ digestPeriod: ms }) => {
        if (ms % DAY_MS !== 0 || ms < DAY_MS || ms > 31 * DAY_MS) {
          fail(`must be whole days from 1d to 31d ${got(ms)}`);
        }
      },
    })
    /**
     * Days a digest's files stay in the bucket (1 to 3650), and a replaced version a day after:
     * they quote questions and answers in people's words, so they do not stay for ever.
     */
    .integer("digestRetentionDays", { default: "90", min: 1, max: 3650 })
    /**
     * The channels digested, comma-separated ids, in groups separated by `;` (a digest and a post
     * each); unset, every channel of the channels table but private chats, a group per platform.
     */
    .text("digestChannels", {
      rule: {
        pattern: DIGEST_CHANNELS,
        rule: "1 to 100 channel ids, comma-separated, groups separated by ;, without whitespace",
      },
      env: {
        digest: {
          variable: "DIGEST_CHANNELS",
          value: (channels) =>
            channels && JSON.stringify(channels.split(";").map((group) => group.split(","))),
        },
      },
    })
    /**
     * A Secrets Manager secret's full ARN holding a Slack incoming webhook URL: each digest is
     * posted there too. Unset: not posted.
     */
    .text("digestSlackWebhookSecret", {
      rule: {
        pattern: SECRET_ARN,
        rule: "a Secrets Manager secret's full ARN, not the webhook URL itself",
        secret: true,
      },
      env: { digest: "SLACK_WEBHOOK_SECRET" },
      check: (v) => forDigest(v.digestSlackWebhookSecret, v.digest),
    })
    /**
     * A standard (not FIFO) SNS topic's ARN: each digest's Markdown is published there too
     * (email, SQS or chat subscribers), cut to SNS's 256 KB. A topic encrypted with a
     * customer-managed KMS key must let the digest function's role use that key. Unset: not
     * published.
     */
    .text("digestSnsTopic", {
      rule: {
        pattern: SNS_TOPIC_ARN,
        rule: "a standard SNS topic's ARN (arn:aws:sns:<region>:<account>:<name>); a FIFO topic would need a message group",
      },
      env: { digest: "DIGEST_SNS_TOPIC" },
      check: (v) => forDigest(v.digestSnsTopic, v.digest),
    })
    /**
     * Deploy the search index (docs/search.md#deployed): LanceDB on an S3 bucket of its own,
     * written by extraction, ingestion and erasure, read by the API's `GET /search`, from a
     * 160 MB Lambda layer. Off: no bucket, no layer, and `/search` answers 501.
     */
    .flag("search", { default: false })
    /**
     * The Bedrock Titan text embeddings model (`amazon.titan-embed-text-v2:0`) whose vectors the
     * search index keeps: `GET /search` then ranks hybrid (keywords and vectors fused). Unset:
     * keywords only, no model is called.
     */
    .text("searchEmbeddingsModel", {
      rule: {
        pattern: TITAN_EMBEDDINGS_MODEL,
        rule: "a Bedrock Titan text embeddings model id such as amazon.titan-embed-text-v2:0 (no wildcard or ARN)",
      },
      check: ({ searchEmbeddingsModel, search }) => {
        if (searchEmbeddingsModel !== undefined && !search)
          fail("is for the search index: set search=true too");
      },
    })
    /**
     * The Slack `/ask` endpoint (docs/connectors.md#ask): the ARN of the secret holding the
     * Slack app's signing secret (the ingest receiver's, or another app's). Unset: not deployed.
     */
    .text("askSlackSigningSecret", {
      rule: askSecret("signing secret"),
      check: (v) => needsSearch(v.askSlackSigningSecret, v.search),
    })
    /**
     * With the Slack `/ask` endpoint, the ARN of the secret holding the app's bot token (scope
     * `chat:write`): app mentions (`@app question`) are answered in their thread. Unset: only
     * the slash command.
     */
    .text("askSlackBotToken", {
      rule: askSecret("bot token"),
      check: ({ askSlackBotToken, askSlackSigningSecret }) => {
        if (askSlackBotToken !== undefined && askSlackSigningSecret === undefined)
          fail("is for the Slack ask endpoint: set askSlackSigningSecret too");
      },
    })
    /**
     * The Discord interactions endpoint for `/ask`: the application's public key (64 hex
     * digits, from the developer portal; public, so not a secret). Unset: not deployed.
     */
    .text("askDiscordPublicKey", {
      rule: { pattern: ED25519_PUBLIC_KEY, rule: "the application's public key, 64 hex digits" },
      check: (v) => needsSearch(v.askDiscordPublicKey, v.search),
    })
    /**
     * The Telegram `/ask` endpoint: the ARN of the secret holding the answering bot's webhook
     * `secret_token`. Unset: not deployed.
     */
    .text("askTelegramSecretToken", {
      rule: askSecret("secret token"),
      check: (v) => needsSearch(v.askTelegramSecretToken, v.search),
    })
    /** The ARN of the secret holding the answering bot's token, which sendMessage needs. */
    .text("askTelegramBotToken", {
      rule: askSecret("bot token"),
      check: ({ askTelegramSecretToken, askTelegramBotToken }) => {
        if (askTelegramSecretToken !== undefined && askTelegramBotToken === undefined)
          fail("must be set with askTelegramSecretToken (the bot answers with it)");
        if (askTelegramSecretToken === undefined && askTelegramBotToken !== undefined)
          fail(
            "is set without askTelegramSecretToken: set both, or neither",
            "askTelegramBotToken",
          );
      },
    })
    /** The answering bot's username: `/ask@another_bot` is left to that bot. Unset: every `/ask`. */
    .text("askTelegramBotUsername", {
      rule: { pattern: BOT_USERNAME, rule: "a Telegram bot username, without the @" },
      check: ({ askTelegramSecretToken, askTelegramBotUsername }) => {
        if (askTelegramBotUsername !== undefined && askTelegramSecretToken === undefined)
          fail("is for the Telegram ask endpoint: set askTelegramSecretToken too");
      },
    })
    /** The command's name on every platform, without its slash. */
    .text("askCommand", {
      default: "ask",
      rule: { pattern: COMMAND_NAME, rule: "1 to 32 of a-z 0-9 _ -" },
    })
    /**
     * The only channels questions are answered in, ids of any platform, comma-separated. Unset:
     * each platform's connector list (slackChannels, telegramChats), else every group chat.
     */
    .text("askChannels", {
      rule: { pattern: ASK_CHANNELS, rule: "1 to 1000 channel ids, comma-separated" },
    })
    /**
     * A Bedrock model id or inference profile id: each answer gets a short summary above its
     * hits, written by that model from those hits alone, each sentence citing its hits, its
     * tokens counted against dailyTokenBudget and channelDailyTokenBudget with extraction's
     * (docs/connectors.md#a-short-answer-by-a-model). Unset: the hits alone.
     */
    .text("askModelId", {
      rule: {
        pattern: BEDROCK_MODEL_ID,
        rule: "a Bedrock model id or inference profile id such as amazon.nova-lite-v1:0 (no wildcard or ARN)",
      },
      check: (v) => {
        const endpoint =
          v.askSlackSigningSecret ?? v.askDiscordPublicKey ?? v.askTelegramSecretToken;
        if (v.askModelId !== undefined && endpoint === undefined)
          fail(
            "is for the ask endpoints: set askSlackSigningSecret, askDiscordPublicKey or askTelegramSecretToken too",
          );
      },
    })
    /** Questions one person may ask a minute, per endpoint instance (1 to 600). */
    .integer("askPerPerson", { default: "5", min: 1, max: 600 })
    /** Questions one channel may ask a minute, per endpoint instance (1 to 6000). */
    .integer("askPerChannel", { default: "20", min: 1, max: 6000 })
    /**
     * Who may mark a message as a question's answer ("Mark as answer" on Slack and Discord):
     * `anyone` in the channels answered, or these user ids, comma-separated. Unset: marking off.
     */
    .text("askMarkers", {
      rule: { pattern: ASK_MARKERS, rule: "anyone, or 1 to 200 Slack or Discord user ids" },
      check: ({ askMarkers, askSlackSigningSecret, askDiscordPublicKey }) => {
        if (
          askMarkers !== undefined &&
          askSlackSigningSecret === undefined &&
          askDiscordPublicKey === undefined
        )
          fail("marks answers through the Slack or Discord ask endpoint: set one of them too");
      },
    });

/** The read API, when `api` turns it on: IAM-authorized, or JWT with an issuer. */
export interface ApiConfig {
  jwt?: { issuer: string; audience: string[] };
  /** Never named among the stats route's answerers. */
  statsOptOut?: string[];
}

/** The scheduled digest, when `digest` turns it on. */
export interface DigestConfig {
  /** An EventBridge schedule expression. */
  schedule: string;
  periodMs: number;
  /** Unset: every channel of the channels table. */
  channels?: string[];
  slackWebhookSecretArn?: string;
  /** A standard SNS topic each digest is published to. */
  snsTopicArn?: string;
  /** Days a digest's files are kept. */
  retentionDays: number;
}

/** An ask endpoint's platform, and what its receiver checks requests with. */
export interface AskConfig {
  slack?: { signingSecretArn: string; botTokenArn?: string };
  discord?: { publicKey: string };
  telegram?: { secretTokenArn: string; botTokenArn: string; botUsername?: string };
  command: string;
  /** Unset: each platform's connector list, else every group chat. */
  channels?: string;
  perPerson: number;
  perChannel: number;
  /** The Bedrock model that writes a summary above the hits; unset: none. */
  modelId?: string;
  /** Who may mark answers on Slack and Discord: `anyone`, or user ids. Unset: marking off. */
  markers?: "anyone" | string[];
}

/** The ask endpoints when any is set; else nothing. */
export function askConfig(v: {
  askSlackSigningSecret: string | undefined;
  askSlackBotToken: string | undefined;
  askDiscordPublicKey: string | undefined;
  askTelegramSecretToken: string | undefined;
  askTelegramBotToken: string | undefined;
  askTelegramBotUsername: string | undefined;
  askCommand: string;
  askChannels: string | undefined;
  askPerPerson: number;
  askPerChannel: number;
  askModelId: string | undefined;
  askMarkers: string | undefined;
}): { ask?: AskConfig } {
  const telegram =
    v.askTelegramSecretToken !== undefined && v.askTelegramBotToken !== undefined
      ? {
          secretTokenArn: v.askTelegramSecretToken,
          botTokenArn: v.askTelegramBotToken,
          ...(v.askTelegramBotUsername !== undefined && { botUsername: v.askTelegramBotUsername }),
        }
      : undefined;
  if (v.askSlackSigningSecret === undefined && v.askDiscordPublicKey === undefined && !telegram)
    return {};
  return {
    ask: {
      ...(v.askSlackSigningSecret !== undefined && {
        slack: {
          signingSecretArn: v.askSlackSigningSecret,
          ...(v.askSlackBotToken !== undefined && { botTokenArn: v.askSlackBotToken }),
        },
      }),
      ...(v.askDiscordPublicKey !== undefined && {
        discord: { publicKey: v.askDiscordPublicKey.toLowerCase() },
      }),
      ...(telegram !== undefined && { telegram }),
      command: v.askCommand,
      ...(v.askChannels !== undefined && { channels: v.askChannels }),
      perPerson: v.askPerPerson,
      perChannel: v.askPerChannel,
      ...(v.askModelId !== undefined && { modelId: v.askModelId }),
      ...(v.askMarkers !== undefined && {
        markers: v.askMarkers === "anyone" ? ("anyone" as const) : v.askMarkers.split(","),
      }),
    },
  };
}

/** The read API with `api`; else nothing. */
export function apiConfig(v: {
  api: boolean;
  apiJwtIssuer: string | undefined;
  apiJwtAudience: string | undefined;
  apiStatsOptOut: string | undefined;
}): { api?: ApiConfig } {
  if (!v.api) return {};
  return {
    api: {
      ...(v.apiJwtIssuer !== undefined &&
        v.apiJwtAudience !== undefined && {
          jwt: { issuer: v.apiJwtIssuer, audience: v.apiJwtAudience.split(",") },
        }),
      ...(v.apiStatsOptOut !== undefined && {
        statsOptOut: v.apiStatsOptOut.split(",").map((name) => name.trim()),
      }),
    },
  };
}

/** The scheduled digest unless `digest=false`; else nothing. */
export function digestConfig(v: {
  digest: boolean;
  digestSchedule: string;
  digestPeriod: number;
  digestChannels: string | undefined;
  digestSlackWebhookSecret: string | undefined;
  digestSnsTopic: string | undefined;
  digestRetentionDays: number;
}): { digest?: DigestConfig } {
  if (!v.digest) return {};
  return {
    digest: {
      schedule: v.digestSchedule,
      periodMs: v.digestPeriod,
      retentionDays: v.digestRetentionDays,
      ...(v.digestChannels !== undefined && { channels: v.digestChannels.split(",") }),
      ...(v.digestSlackWebhookSecret !== undefined && {
        slackWebhookSecretArn: v.digestSlackWebhookSecret,
      }),
      ...(v.digestSnsTopic !== undefined && { snsTopicArn: v.digestSnsTopic }),
    },
  };
}
