/**
 * The world the ask endpoints' Lambda tests run in: a search index in a temporary directory
 * holding the IRC sample's messages and one answered question as each platform would store them,
 * a Secrets Manager and a Lambda on 127.0.0.1 (the endpoint's asynchronous invocation of the
 * answer function is recorded, and the test runs it), and a scripted platform that records what
 * is posted to it (Slack's `response_url`, Discord's webhook, Telegram's Bot API).
 */
import { once } from "node:events";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from "aws-lambda";
import type { ChatMessage } from "convoseg/messages";
import { type SearchResultSource, searchDocuments } from "convoseg/search";
import { LanceChannelIndexes } from "convoseg/search/lancedb";
import { vi } from "vitest";
import { startSecretsServer } from "./secrets-manager.js";

export interface Recorded {
  method: string;
  path: string;
  body: string;
}

/** A server on 127.0.0.1 that records each request and answers `status` with `{"ok":true}`. */
export async function recordingServer(status = 200) {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      requests.push({
        method: request.method ?? "",
        path: request.url ?? "",
        body: Buffer.concat(chunks).toString("utf8"),
      });
      response.writeHead(status, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The IRC sample's messages, as the chat reader reads them. */
function ircSample(): { id: number; ts: string; user: string | null; text: string }[] {
  return readFileSync("examples/irc-ubuntu.jsonl", "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** How one platform names the sample's channel and messages. */
export interface PlatformIds {
  platform: "slack" | "discord" | "telegram";
  channel: string;
  id: (sampleId: number, ms: number) => string;
}

const SNOWFLAKE_BASE = 1_150_000_000_000_000_000n;
export const PLATFORMS = {
  slack: {
    platform: "slack",
    channel: "C0UBUNTU1",
    id: (n, ms) => `${Math.floor(ms / 1000)}.${String(n).padStart(6, "0")}`,
  },
  discord: {
    platform: "discord",
    channel: "1100000000000000001",
    // The sample predates Discord (2015): a snowflake-shaped id made of the sample's id.
    id: (n) => String(SNOWFLAKE_BASE + BigInt(n)),
  },
  telegram: { platform: "telegram", channel: "-1001234567890", id: (n) => `-1001234567890:${n}` },
} as const satisfies Record<string, PlatformIds>;

/** The sample's question whose answer is asked for again: where apt keeps what it downloaded. */
export const ASKED = 1007;
const ANSWERS = [1019, 1022];
const SEGMENT = [1007, 1009, 1013, 1014, 1019, 1020, 1022, 1031];

/**
 * Fills `index` with the sample as `ids` store it: every message, and a conversation whose
 * result holds the question of message 1007, answered by 1019 and 1022 (as extraction finds it).
 */
async function indexSample(index: LanceChannelIndexes, ids: PlatformIds): Promise<void> {
  const sample = ircSample();
  const messages: ChatMessage[] = sample.map((m) => {
    const ts = Date.parse(m.ts);
    return {
      id: ids.id(m.id, ts),
      ts,
      channel: ids.channel,
      user: m.user,
      text: m.text,
      platform: ids.platform,
    };
  });
  const idOf = (n: number) => messages[sample.findIndex((m) => m.id === n)];
  const asked = idOf(ASKED);
  const result: SearchResultSource = {
    channel: ids.channel,
    segmentId: "s-apt-cache",
    first: { id: asked.id, ts: asked.ts },
    last: { id: idOf(1031).id, ts: idOf(1031).ts },
    messageIds: SEGMENT.map((n) => idOf(n).id),
    candidates: [],
    questions: [
      {
        id: "q-apt-cache",
        question: "Where does Ubuntu save the files downloaded from the repositories?",
        status: "answered",
        askedId: asked.id,
        askedTs: asked.ts,
        askedBy: "norman_x",
        answer: "In /var/cache/apt/archives",
        answerIds: ANSWERS.map((n) => idOf(n).id),
      },
    ],
  };
  const documents = searchDocuments({ messages, results: [result], topics: [] });
  await index.replaceSegment(ids.channel, result.segmentId, documents);
}

/** A temporary index directory holding the sample for every platform. */
export async function sampleIndex(): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), "convoseg-ask-")), "index");
  const index = new LanceChannelIndexes(dir);
  for (const ids of Object.values(PLATFORMS)) await indexSample(index, ids);
  index.close();
  return dir;
}

/**
 * Loads the `handler` exports of `modules` (paths from the repository root) afresh, with static
 * AWS credentials, the Lambda and Secrets Manager endpoints given, and `environment`.
 */
export async function loadHandlers<T extends unknown[]>(
  modules: string[],
  environment: Record<string, string>,
): Promise<T> {
  vi.resetModules();
  const aws = {
    POWERTOOLS_METRICS_DISABLED: "true",
    POWERTOOLS_LOG_LEVEL: "SILENT",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
  };
  for (const [key, value] of Object.entries({ ...aws, ...environment })) vi.stubEnv(key, value);
  const handlers: unknown[] = [];
  for (const module of modules) handlers.push((await import(`../../${module}`)).handler);
  return handlers as T;
}

export { startSecretsServer };

/** A receiver function's handler, as its Function URL calls it. */
export type UrlHandler = (
  event: LambdaFunctionURLEvent,
) => Promise<Exclude<LambdaFunctionURLResult, string>>;

/** A Function URL's POST event carrying `body` as the platform sent it. */
export const urlEvent = (headers: Record<string, string>, body: string) =>
  ({
    version: "2.0",
    rawPath: "/",
    headers,
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: "POST" } },
  }) as unknown as LambdaFunctionURLEvent;
