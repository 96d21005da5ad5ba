import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { INVALID_OUTPUT_ATTEMPTS } from "convoseg/knowledge/write";
import { beforeEach, describe, expect, inject, it, vi } from "vitest";
import { LLM_FAILURE_BUDGET } from "../../local/llm-failures.js";
import { sampleChat } from "../../local/sample.js";
import { runCli } from "../support/cli.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  closedPort,
  type RecordedRequest,
  startChatCompletionsServer,
} from "../support/llm-servers.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-run-extraction-"));
const startServer = closedAfterEach(startChatCompletionsServer);
const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

const input = join(dir, "chat.jsonl");
writeFileSync(
  input,
  sampleChat({
    seed: 7,
    channels: ["a", "b"],
    perChannel: 40,
    settle: 6 * 3_600_000,
    topical: true,
  })
    .map((m) => JSON.stringify(m))
    .join("\n"),
);
const SEGMENTING = ["--input", input, "--settle", "6h", "--tick", "15m", "--max-size", "12"];

interface CandidatesLine {
  channel: string;
  segmentId: string;
  late: boolean;
  model: string;
  promptVersion: string;
  candidates: {
    id: string;
    topic: string;
    messageIds: [string, string] | null;
    authorCount?: number;
    authors?: string[];
  }[];
  usage: Record<string, number>;
}

const jsonLines = <T>(file: string): T[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

/** A model that names the first word after "the" in its excerpt as the topic of turns 1 to 2. */
function answer(request: RecordedRequest) {
  const { messages } = request.body as { messages: { role: string; content: string }[] };
  const prompt = messages.find((m) => m.role === "user")?.content ?? "";
  const topic = /Turn 1 \[USER\] "[^"]*": ".*?the (\w+)/.exec(prompt)?.[1] ?? "chat";
  return chatCompletion(
    JSON.stringify({
      candidates: [
        {
          topic,
          reason: "asked about",
          confidence: 0.8,
          tags: ["help"],
          turn_range: [1, 2],
          subjective: false,
          wiki_worthy: null,
        },
      ],
    }),
    {
      usage: {
        prompt_tokens: 50,
        completion_tokens: 9,
        prompt_tokens_details: { cached_tokens: 8 },
      },
    },
  );
}

beforeEach(() => {
  vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  vi.stubEnv("OPENAI_API_KEY", "test-key");
});

describe("run command with extraction", () => {
  it("extracts every delivered segment exactly once with the offline extractor", async () => {
    const out = join(dir, "offline-segments.jsonl");
    const candidates = join(dir, "offline-candidates.jsonl");

    const run = await cli(["run", ...SEGMENTING, "--out", out, "--candidates", candidates]);

    expect(run.code, run.stderr).toBe(0);
    const segments = jsonLines<{ segmentId: string; messageIds: string[] }>(out);
    const lines = jsonLines<CandidatesLine>(candidates);
    expect(lines.map((l) => l.segmentId).sort()).toEqual(segments.map((s) => s.segmentId).sort());
    expect(new Set(lines.map((l) => l.segmentId)).size).toBe(lines.length);
    const ids = new Map(segments.map((s) => [s.segmentId, s.messageIds]));
    for (const line of lines) {
      expect(line.model).toBe("keyphrase-extractor (offline, no LLM)");
      expect(line.promptVersion).toBe("keyphrases-4");
      // Not a model: no calls, no tokens.
      expect(line.usage.calls).toBe(0);
      for (const candidate of line.candidates) {
        for (const id of candidate.messageIds ?? []) expect(ids.get(line.segmentId)).toContain(id);
      }
    }
    expect(run.stdout).toMatch(
      new RegExp(`, ${segments.length} of ${segments.length} extracted; \\d+ s\\.$`, "m"),
    );
    // Channel a's top topics, each with the conversations that support it.
    expect(run.stdout).toMatch(
      /^a: 40 messages in \d+ conversations \(\d+ segments\), .*\n {2}\S.* \d+ conversations? /m,
    );
  }, 120_000);

  it("names subjects, not people, on IRC lines without a channel, with --channel", async () => {
    const irc = join(dir, "irc.jsonl");
    const people = ["talchas", "Yaniel", "WindowsBunny"];
    const lines = Array.from({ length: 30 }, (_, i) => {
      const ts = new Date(Date.UTC(2018, 4, 29, 21) + i * 60_000).toISOString();
      if (i % 10 === 9) {
        return {
          id: i,
          ts,
          user: null,
          text: `${people[i % 3]} [~x@host] has joined #rust`,
          system: true,
        };
      }
      const to = people[(i + 1) % 3];
      const text = [
        `${to}: the borrow checker rejects it`,
        `@${to} borrow checker again`,
        `${to}, the lifetime elision rules`,
      ][i % 3];
      return { id: i, ts, user: people[i % 3], text, system: false };
    });
    writeFileSync(irc, lines.map((l) => JSON.stringify(l)).join("\n"));
    const candidates = join(dir, "irc-candidates.jsonl");

    const run = await cli([
      "run",
      "--input",
      irc,
      "--channel",
      "rust",
      "--candidates",
      candidates,
      "--out",
      join(dir, "irc-segments.jsonl"),
    ]);

    expect(run.code, run.stderr).toBe(0);
    const found = jsonLines<CandidatesLine>(candidates).flatMap((l) => {
      expect(l.channel).toBe("rust");
      return l.candidates.map((c) => c.topic.toLowerCase());
    });
    expect(found).toContain("borrow checker");
    for (const topic of found) {
      for (const person of people) expect(topic).not.toContain(person.toLowerCase());
      expect(topic).not.toMatch(/joined|host/);
    }
    // The summary names the channel and its topics.
    expect(run.stdout).toMatch(
      /^rust: 30 messages in \d+ conversations?.*(?:\n {2}.*)*\n {2}borrow checker /m,
    );
  }, 120_000);

  it("gets one line per segment through throttling, server errors and garbage, counting every call", async () => {
    // Segments of at most 12 messages are one window each: every answer belongs to one segment.
    // An endpoint without --extractor is an OpenAI-compatible one.
    const answered = { good: 0, garbage: 0 };
    const failures = [
      chatError(429, { "retry-after-ms": "1" }),
      chatError(503, { "retry-after-ms": "1" }),
      chatCompletion("{oops", { usage: { prompt_tokens: 10, completion_tokens: 2 } }),
    ];
    const server = await startServer((request, index) => {
      const failure = index < 24 && index % 4 === 1 ? failures[(index >> 2) % 3] : undefined;
      if (failure?.status === undefined) {
        if (failure) answered.garbage++;
        else answered.good++;
      }
      return failure ?? answer(request);
    });
    const out = join(dir, "openai-segments.jsonl");
    const candidates = join(dir, "openai-candidates.jsonl");

    const run = await cli([
      "run",
      ...SEGMENTING,
      "--out",
      out,
      "--candidates",
      candidates,
      "--llm-endpoint",
      `${server.url}/v1`,
      "--model",
      "scripted",
      "--max-output-tokens",
      "300",
    ]);

    expect(run.code, run.stderr).toBe(0);
    // Every call carries the output-token limit asked for.
    expect(server.requests.map((r) => (r.body as { max_tokens?: number }).max_tokens)).toEqual(
      server.requests.map(() => 300),
    );
    const segments = jsonLines<{ segmentId: string }>(out);
    const lines = jsonLines<CandidatesLine>(candidates);
    expect(lines.map((l) => l.segmentId).sort()).toEqual(segments.map((s) => s.segmentId).sort());
    expect(lines.every((l) => l.model === "scripted" && l.promptVersion === "3/sliding-60-6")).toBe(
      true,
    );
    expect(answered.garbage).toBeGreaterThan(0);
    // Every answered call is in its segment's usage, the rejected replies of failed attempts too.
    const total = (field: string) => lines.reduce((sum, l) => sum + l.usage[field], 0);
    expect(total("calls")).toBe(answered.good + answered.garbage);
    expect(total("inputTokens")).toBe(50 * answered.good + 10 * answered.garbage);
    expect(total("cacheReadTokens")).toBe(8 * answered.good);
    expect(lines.every((l) => l.candidates.length === 1)).toBe(true);
    // Turns 1 to 2 of a segment: one or two people wrote that evidence, and the line says who.
    for (const {
      candidates: [c],
    } of lines) {
      expect(c.authors).toHaveLength(c.authorCount ?? -1);
      expect([1, 2]).toContain(c.authorCount);
    }
  }, 180_000);

  it("tries again the segments the model answers with garbage, gives them up after a few attempts naming why, and exits 1", async () => {
    // The endpoint answers, so this does not stop the run; a reply invalid after its repair
    // request is tried again (models sample), but fewer times than an outage.
    const server = await startServer(() => chatCompletion("{oops"));

    const run = await cli([
      "run",
      ...SEGMENTING,
      "--llm-endpoint",
      `${server.url}/v1`,
      "--max-attempts",
      "6",
    ]);

    expect(run.code).toBe(1);
    const gaveUp = new RegExp(
      `gave up on segment [0-9a-f]{32} \\(channel "[ab]", \\d+ messages\\) after ${INVALID_OUTPUT_ATTEMPTS} attempts: InvalidModelOutputError EXTRACTION_INVALID_OUTPUT\n`,
      "g",
    );
    const segments = run.stderr.match(gaveUp)?.length ?? 0;
    expect(segments).toBeGreaterThan(1);
    expect(run.stderr).not.toContain("at its first failure");
    // A window's call and its repair request per attempt: more than one attempt per segment, at
    // most the bound's. (Locally a receive skipped behind its channel's failing head counts too.)
    expect(server.requests.length).toBeGreaterThan(2 * segments);
    expect(server.requests.length).toBeLessThanOrEqual(2 * INVALID_OUTPUT_ATTEMPTS * segments);
    expect(run.stderr.match(/extraction failed/g)).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^run: extraction failed: model "gpt-4o-mini" did not reply with the JSON asked for, even after one repair request; .*--model/m,
    );
    expect(run.stderr).not.toContain("oops");
    expect(run.stderr).toMatch(/run: \d+ segments not extracted \(see above\)\n$/);
    expect(run.stdout).toMatch(/^Not extracted: \d+ segments \(see why above\)/m);
  }, 180_000);

  it.each([
    [
      "refused connections",
      null,
      /^run: extraction failed: http:\/\/127\.0\.0\.1:\d+\/v1 refused the connection \(ECONNREFUSED\); start the model server there, or check --llm-endpoint$/m,
    ],
    [
      "a 401",
      chatError(401, {}, "Incorrect API key provided"),
      /^run: extraction failed: http:\/\/127\.0\.0\.1:\d+\/v1 refused the credentials \(401 Unauthorized\); set OPENAI_API_KEY to a key this endpoint accepts\n {2}\(.*401 Incorrect API key provided/m,
    ],
    [
      "a 403",
      chatError(403),
      /^run: extraction failed: .* refused access \(403 Forbidden\); check that the key in OPENAI_API_KEY may use model "gpt-4o-mini"/m,
    ],
    [
      "a 404 for the model",
      chatError(404, {}, "The model `gpt-4o-mini` does not exist"),
      /^run: extraction failed: .* has no model "gpt-4o-mini", or no chat completions API there \(404 Not Found\); check --model, and that --llm-endpoint ends in .*\n {2}\(.*does not exist/m,
    ],
  ])(
    "names %s at the first failure and stops extracting after a few in a row",
    async (_, failure, said) => {
      const server = failure && (await startServer(() => failure));
      const endpoint = server ? `${server.url}/v1` : `http://127.0.0.1:${await closedPort()}/v1`;
      const out = join(dir, "stopped-segments.jsonl");
      const started = performance.now();

      const run = await cli(["run", ...SEGMENTING, "--out", out, "--llm-endpoint", endpoint]);

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(said);
      expect(run.stderr.match(/extraction failed/g)).toHaveLength(1);
      const segments = jsonLines(out).length;
      expect(segments).toBeGreaterThan(LLM_FAILURE_BUDGET);
      const stop = new RegExp(
        `^run: extraction stopped after ${LLM_FAILURE_BUDGET} failures in a row: .*; (\\d+) segments of ${segments} not extracted: .*, then run the same command again\\.$`,
        "m",
      );
      expect(run.stderr).toMatch(stop);
      const left = Number(stop.exec(run.stderr)?.[1]);
      expect(run.stdout).toMatch(new RegExp(`, ${segments - left} of ${segments} extracted \\(`));
      // Each of the budget's segments was tried once (a window, with the SDK's retries for
      // what they retry), and nothing after the stop.
      if (server) expect(server.requests.length).toBeLessThanOrEqual(LLM_FAILURE_BUDGET * 4);
      expect(performance.now() - started).toBeLessThan(60_000);
    },
    120_000,
  );

  it("takes a server on this machine without a key, and refuses another without one", async () => {
    vi.stubEnv("OPENAI_API_KEY", undefined);
    const server = await startServer((request) => answer(request));
    const run = await cli(["run", ...SEGMENTING, "--llm-endpoint", `${server.url}/v1`]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests.length).toBeGreaterThan(0);
    const remote = await cli([
      "run",
      ...SEGMENTING,
      "--llm-endpoint",
      "https://llm.example.com/v1",
    ]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(
      /^run: --extractor openai needs OPENAI_API_KEY set: the key of https:\/\/llm\.example\.com\/v1 \(a server on this machine/m,
    );
  }, 120_000);

  it("asks the model about unsure links with --ask-links, and still delivers each message once", async () => {
    const out = join(dir, "asked-segments.jsonl");
    const asked: string[] = [];
    const server = await startServer((request) => {
      const { messages } = request.body as { messages: { role: string; content: string }[] };
      if (!messages[0]?.content.startsWith("You decide which earlier chat message"))
        return answer(request);
      const prompt = messages[1]?.content ?? "";
      asked.push(prompt);
      // Every second question starts a conversation; the rest take the option the model ranked
      // first; one answer names an option never shown, and is ignored.
      const questions = prompt.match(/^Question \d+:/gm) ?? [];
      return chatCompletion(
        JSON.stringify({
          answers: [
            ...questions.map((_, i) => ({ question: i + 1, choice: i % 2 === 0 ? "new" : 1 })),
            { question: 1, choice: 99 },
          ],
        }),
      );
    });
    const run = await cli([
      "run",
      ...SEGMENTING,
      "--llm-endpoint",
      `${server.url}/v1`,
      "--ask-links",
      "--out",
      out,
      "--verbose",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(asked.length).toBeGreaterThan(0);
    const questions = asked.join("\n").match(/^Question \d+:/gm)?.length ?? 0;
    expect(run.stdout).toContain(
      `links asked of the model (--ask-links): ${questions}, answers taken ${questions}; batches failed 0`,
    );
    const delivered = jsonLines<{ messageIds: string[] }>(out).flatMap((s) => s.messageIds);
    expect(delivered).toHaveLength(80);
    expect(new Set(delivered).size).toBe(80);
  }, 120_000);

  it.each([
    [["--ask-links"], /--ask-links needs a model: --extractor openai or bedrock/],
    [
      ["--model", "m", "--ask-links", "--conversations", "contiguous"],
      /--ask-links needs --conversations linked/,
    ],
    [["--extractor", "gpt"], /--extractor must be one of none, bedrock, openai, offline/],
    [["--channel", "rust"], /--channel needs --input/],
    [["--input", "x.jsonl", "--channel", ""], /--channel must be a channel id/],
    [["--route", "zigzag"], /--route must be one of/],
    [
      ["--window-size", "4", "--overlap", "4"],
      /--overlap must be an integer from 0 to --window-size - 1 \(3\)/,
    ],
    [["--extractor", "none", "--candidates", "x"], /--candidates needs extraction/],
    [["--extractor", "offline", "--model", "m"], /--model needs --extractor openai or bedrock/],
    [
      ["--extractor", "openai", "--llm-endpoint", "localhost:8080"],
      /--llm-endpoint must be an http\(s\) URL/,
    ],
  ])("rejects %j with usage", async (args, message) => {
    const { code, stderr } = await cli(["run", ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
