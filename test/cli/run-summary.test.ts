import { join } from "node:path";
import type { Topic } from "convoseg/knowledge/read";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";
import { channelSummaries } from "../../cli/run/run-figures.js";
import {
  type ChannelSummary,
  finishingLine,
  formatRunSummary,
  type RunSummary,
  replayLine,
  runEnding,
  SUMMARY_CHANNELS,
} from "../../cli/run/run-summary.js";
import { formatSpan, plural, shellArg } from "../../cli/shared/format.js";

const DAY = 86_400_000;
const T0 = Date.UTC(2018, 4, 29, 21, 20);

const topic = (name: string, segments: number, first: number, last: number): Topic => ({
  topic: name,
  normalizedTopic: name.toLowerCase(),
  aliases: [],
  segments,
  firstSeen: first,
  lastSeen: last,
  bestConfidence: 0.9,
  bestReason: "",
  tags: [],
  evidence: [],
});

const channel = (name: string, segments: number, topics: Topic[] = []): ChannelSummary => ({
  name,
  messages: 1200,
  segments,
  first: T0,
  last: T0 + DAY + 11 * 3_600_000,
  topics,
});

function summary(overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    messages: 1200,
    channels: [
      channel("#rust", 4, [
        topic("borrow checker", 3, T0, T0 + DAY),
        topic("cargo features", 1, T0 + 3_600_000, T0 + 3_600_000 + 20 * 60_000),
      ]),
    ],
    segments: 4,
    wallMs: 43_400,
    extraction: {
      offline: true,
      model: "keyphrase-extractor (offline, no LLM)",
      route: "sliding 60/6",
      extracted: 4,
      givenUp: 0,
      retried: 0,
      calls: 23,
      inputTokens: 0,
      cacheReadTokens: 0,
      outputTokens: 0,
    },
    internals: {
      ticks: 220,
      tickMs: 300_000,
      lateSegments: 0,
      notStored: 0,
      lateMessages: 1,
      droppedMessages: 2,
      channelErrors: 0,
      messageItemReads: 2,
      channelItemReads: 0.734,
    },
    ...overrides,
  };
}

describe("run's summary", () => {
  it("leads with each channel's top topics, their support and when, then the counts and what to do next", () => {
    expect(formatRunSummary(summary(), false)).toBe(
      [
        "What was talked about, by channel (offline keyphrase extractor, no LLM):",
        "",
        "#rust: 1,200 messages in 4 conversations, 2018-05-29 21:20 to 2018-05-31 08:20 UTC",
        "  borrow checker  3 conversations  2018-05-29 to 2018-05-30",
        "  cargo features  1 conversation   2018-05-29",
        "",
        "1,200 messages in 1 channel, 4 segments (conversations), 4 of 4 extracted; 43 s.",
        "",
        "Next:",
        "  npm start -- topics '#rust'  every topic of #rust, with the messages that support it",
        "  npm start -- report --open   the report in a browser: the topics first, then every conversation",
        "",
      ].join("\n"),
    );
  });

  it("counts each channel's questions and the unanswered ones, and says how to list them", () => {
    const asked = {
      ...channel("#rust", 4, [topic("borrow checker", 3, T0, T0 + DAY)]),
      questions: { total: 12, unanswered: 3, unclear: 2 },
    };
    const quiet = { ...channel("#go", 2), questions: { total: 1, unanswered: 0 } };
    const text = formatRunSummary(summary({ channels: [asked, quiet, channel("#c", 1)] }), false);
    const lines = text.split("\n");
    const at = lines.indexOf("  borrow checker  3 conversations  2018-05-29 to 2018-05-30");
    expect(lines[at + 1]).toBe("  12 questions asked, 3 unanswered, 2 unclear");
    expect(text).toContain("  no topics extracted\n  1 question asked, 0 unanswered\n");
    expect(text.match(/questions? asked/g)).toHaveLength(2);
    expect(text).toMatch(
      /^ {2}npm start -- questions '#rust' --status unanswered +the questions of #rust nobody answered, oldest first$/m,
    );
    const none = formatRunSummary(summary({ channels: [quiet] }), false);
    expect(none).not.toContain("npm start -- questions");
  });

  it("in linked mode, says how many conversations each channel held, apart from its segments", () => {
    const linked = {
      ...channel("#rust", 4, [topic("borrow checker", 3, T0, T0 + DAY)]),
      conversations: 3,
    };
    const quiet = { ...channel("#go", 1), conversations: 1 };
    const text = formatRunSummary(summary({ channels: [linked, quiet], segments: 5 }), false);
    expect(text).toMatch(
      /^#rust: 1,200 messages in 3 conversations \(4 segments\), 2018-05-29 21:20 to 2018-05-31 08:20 UTC$/m,
    );
    expect(text).toMatch(/^#go: 1,200 messages in 1 conversation \(1 segment\), /m);
    expect(text).toMatch(
      /^1,200 messages in 2 channels, 4 conversations in 5 segments, 4 of 5 extracted; 43 s\.$/m,
    );
    // Without conversations (contiguous mode) a segment is a conversation, as before.
    expect(formatRunSummary(summary(), false)).toMatch(
      /^1,200 messages in 1 channel, 4 segments \(conversations\), /m,
    );
  });

  it("names an export's channel by its display name, then its id; control characters escaped", () => {
    const named = { ...channel("C0GENERAL", 2), displayName: "general\u001b[2J" };
    const text = formatRunSummary(summary({ channels: [named] }), false);
    expect(text).toMatch(/^general\\u001b\[2J \(C0GENERAL\): 1,200 messages in 2 conversations, /m);
    expect(text).not.toContain("\u001b");
  });

  it("suggests commands with the id, which every command takes, and names the channel as people know it", () => {
    const named = {
      ...channel("C0GENERAL", 2, [topic("deploys", 2, T0, T0)]),
      displayName: "general",
      questions: { total: 2, unanswered: 1 },
    };
    const text = formatRunSummary(summary({ channels: [named] }), false);
    expect(text).toMatch(
      /^ {2}npm start -- topics C0GENERAL +every topic of general \(C0GENERAL\), with the messages/m,
    );
    expect(text).toMatch(
      /^ {2}npm start -- questions C0GENERAL --status unanswered +the questions of general \(C0GENERAL\) nobody answered/m,
    );
  });

  it("counts one of a thing as one: no '1 messages'", () => {
    const one = { ...channel("#rust", 1, [topic("borrow checker", 1, T0, T0)]), messages: 1 };
    const text = formatRunSummary(summary({ messages: 1, segments: 1, channels: [one] }), false);
    expect(text).toMatch(/^#rust: 1 message in 1 conversation, /m);
    expect(text).toMatch(/^1 message in 1 channel, 1 segment \(conversations\), /m);
    expect(text).not.toMatch(/\b1 (message|segment|channel|conversation|question)s\b/);
  });

  it("says the segments an earlier command left apart from this run's, so that the counts add up", () => {
    const text = formatRunSummary(
      summary({
        workspace: { dir: "/tmp/ws", resumed: 1, channels: 1, segments: 5, extracted: 5 },
      }),
      false,
    );
    expect(text).toMatch(
      /^1,200 messages in 1 channel, 4 segments \(conversations\), 4 of 4 extracted, and 1 segment an earlier command left, taken up first; 43 s\.$/m,
    );
    expect(text).toMatch(
      /^Kept in the workspace \/tmp\/ws: 5 segments of 1 channel, 5 extracted /m,
    );
  });

  it("says --workspace in the next commands when the run used another workspace than the default", () => {
    const at = (dir: string) =>
      formatRunSummary(
        summary({ workspace: { dir, resumed: 0, channels: 1, segments: 4, extracted: 4 } }),
        false,
      );
    const elsewhere = at("/tmp/my ws");
    expect(elsewhere).toMatch(/^ {2}npm start -- topics --workspace '\/tmp\/my ws' '#rust' /m);
    expect(elsewhere).toMatch(/^ {2}npm start -- report --workspace '\/tmp\/my ws' --open /m);
    // Below the current directory, as a relative path.
    expect(at(join(process.cwd(), "runs", "a"))).toMatch(
      /^ {2}npm start -- topics --workspace runs\/a '#rust' /m,
    );
    // The default workspace needs no flag.
    const here = at(join(process.cwd(), ".convoseg"));
    expect(here).toMatch(/^ {2}npm start -- topics '#rust' /m);
    expect(here).not.toContain("--workspace");
  });

  it("suggests a channel id that starts with '-' after '--', so it is not read as an option", () => {
    const group = channel("-1001234567890", 2, [topic("deploys", 2, T0, T0)]);
    expect(formatRunSummary(summary({ channels: [group] }), false)).toMatch(
      /^ {2}npm start -- topics -- -1001234567890 {2}every topic of -1001234567890,/m,
    );
  });

  it("keeps the internals for --verbose", () => {
    const quiet = formatRunSummary(summary(), false);
    const verbose = formatRunSummary(summary(), true);
    for (const internal of [/220 ticks/, /items read per message: 2\.00/, /dropped 2/]) {
      expect(quiet).not.toMatch(internal);
      expect(verbose).toMatch(internal);
    }
    expect(verbose).toMatch(
      /^ {2}220 ticks 5m apart on the simulated clock; DynamoDB items read per message: 2\.00 message items, 0\.73 channel state and due index items$/m,
    );
  });

  it("names the model and its cost with an LLM, and the file with --report", () => {
    const text = formatRunSummary(
      summary({
        extraction: {
          ...(summary().extraction as NonNullable<RunSummary["extraction"]>),
          offline: false,
          model: "gpt-4o-mini",
          extracted: 3,
          calls: 5,
          inputTokens: 12_345,
          outputTokens: 678,
        },
        report: { path: "/tmp/a report.html", bytes: 2_400_000 },
      }),
      false,
    );
    expect(text).toMatch(/^What was talked about, by channel \(gpt-4o-mini\):$/m);
    expect(text).toMatch(
      /, 3 of 4 extracted \(5 LLM calls, 12,345 input and 678 output tokens\); 43 s\.\nNot extracted: 1 segment \(see why above\); fix the cause, then run the same command again\.$/m,
    );
    expect(text).toMatch(
      /^ {2}file:\/\/\/tmp\/a%20report\.html {2}the report it wrote \(2\.4 MB\): open it in a browser$/m,
    );
    expect(text).not.toContain("report --open");
  });

  it("lists the busiest channels and counts the rest; without extraction, no topics", () => {
    const many = Array.from({ length: SUMMARY_CHANNELS + 3 }, (_, i) => channel(`c${i}`, 20 - i));
    const text = formatRunSummary(summary({ channels: many }), false);
    expect(text.match(/^c\d+: /gm)).toHaveLength(SUMMARY_CHANNELS);
    expect(text).toContain("  no topics extracted");
    expect(text).toContain("… and 3 more channels (npm start -- topics <channel>");
    const off = formatRunSummary(summary({ extraction: null }), false);
    expect(off).toMatch(/^Extraction was off \(--extractor none\)/);
    expect(off).not.toMatch(/borrow checker|topics '#rust'|extracted/);
  });

  it("writes chat-made names and topics without terminal controls", () => {
    const text = formatRunSummary(
      summary({ channels: [channel("a\u001b[2Jb", 1, [topic("x\u0007y", 1, T0, T0)])] }),
      false,
    );
    expect(text).not.toMatch(/\p{Cc}(?<!\n)/u);
    expect(text).toContain("a\\u001b[2Jb:");
    expect(text).toContain("x\\u0007y");
  });
});

describe("the summary's figures", () => {
  let made = 0;
  const delivered = (channel: string, more: Partial<SegmentMessageV1>): SegmentMessageV1 => ({
    v: 1,
    segmentId: `s${++made}`,
    channel,
    late: false,
    belongsAfter: null,
    count: 1,
    first: { id: "m", ts: T0 },
    last: { id: "m", ts: T0 },
    messageIds: ["m"],
    ...more,
  });
  const messages = ["help", "help", "ops"].map((channel, i) => ({
    id: String(i),
    ts: T0 + i,
    channel,
    text: "",
  }));

  it("counts a channel's conversations in linked mode: its linked ones and its threads, once each", async () => {
    const channels = await channelSummaries(
      messages,
      [
        delivered("help", { conversation: "a" }),
        // A conversation cut at a lull: two segments, one conversation.
        delivered("help", { conversation: "a" }),
        delivered("help", { conversation: "b" }),
        delivered("help", { thread: "r1" }),
        // The channel's own (its system lines): no conversation.
        delivered("help", {}),
        delivered("ops", { thread: "r2" }),
      ],
      undefined,
    );
    expect(channels.map((c) => [c.name, c.segments, c.conversations])).toEqual([
      ["help", 5, 3],
      ["ops", 1, 1],
    ]);
  });

  it("counts none in contiguous mode, where no segment names a conversation", async () => {
    const channels = await channelSummaries(
      messages,
      [delivered("help", {}), delivered("ops", { thread: "r2" })],
      undefined,
    );
    expect(channels.map((c) => c.conversations)).toEqual([undefined, undefined]);
  });
});

describe("the summary's formats", () => {
  it.each([
    [T0, T0, "day", "2018-05-29"],
    [T0, T0 + 2 * DAY, "day", "2018-05-29 to 2018-05-31"],
    [T0, T0, "minute", "2018-05-29 21:20"],
    [T0, T0 + 30 * 60_000, "minute", "2018-05-29 21:20–21:50"],
    [T0, T0 + DAY, "minute", "2018-05-29 21:20 to 2018-05-30 21:20"],
  ] as const)("spans %i to %i to the %s: %s", (first, last, unit, text) => {
    expect(formatSpan(first, last, unit)).toBe(text);
  });

  it("counts with the noun's number and quotes what a shell would read otherwise", () => {
    expect([plural(1, "segment"), plural(0, "segment"), plural(1200, "message")]).toEqual([
      "1 segment",
      "0 segments",
      "1,200 messages",
    ]);
    expect(["default", "ops-2", "#rust", "it's", "a b", "$(x)"].map(shellArg)).toEqual([
      "default",
      "ops-2",
      "'#rust'",
      "'it'\\''s'",
      "'a b'",
      "'$(x)'",
    ]);
    // What a terminal would not show is typed as $'…' escapes, the only way to type it back.
    expect(["desk\u200b", "it's\u202e", "x\u{e0001}"].map(shellArg)).toEqual([
      "$'desk\\u200b'",
      "$'it\\'s\\u202e'",
      "$'x\\U000e0001'",
    ]);
  });
});

describe("the replay's status line", () => {
  const at = { now: T0, ingested: 40, total: 90, delivered: 12 };

  it("never shows more extracted than delivered: an earlier command's segments are said apart", () => {
    expect(replayLine({ ...at, ingested: 1, total: 1 }, 12, 1)).toBe(
      "replay: 2018-05-29T21:20Z, 1 of 1 message ingested, 12 segments delivered, 12 of them extracted (and 1 an earlier command left)",
    );
    // A resumed segment retried during the replay is counted by the metric too: never past 12.
    expect(replayLine(at, 13)).toMatch(/12 segments delivered, 12 of them extracted$/);
    expect(replayLine({ ...at, delivered: 1 }, undefined)).toMatch(/, 1 segment delivered$/);
    expect(finishingLine(12, 13, 1)).toBe(
      "extraction: 12 of 12 segments extracted (and 1 an earlier command left), finishing",
    );
    expect(finishingLine(1, 0, 0)).toBe("extraction: 0 of 1 segment extracted, finishing");
  });
});

describe("runEnding", () => {
  it("fails a run that did not store a valid message, even with --skip-invalid", () => {
    expect(runEnding({ skipped: 2, notStored: 1, taken: 0, notExtracted: 0 })).toEqual({
      lines: [
        "run: 2 invalid lines skipped (--skip-invalid; listed above)",
        "run: 1 valid message not stored (see above)",
      ],
      code: 1,
    });
  });

  it("reports skipped lines and exits 0 when everything valid was stored and extracted", () => {
    expect(runEnding({ skipped: 1, notStored: 0, taken: 0, notExtracted: 0 })).toEqual({
      lines: ["run: 1 invalid line skipped (--skip-invalid; listed above)"],
      code: 0,
    });
    expect(runEnding({ skipped: 0, notStored: 0, taken: 0, notExtracted: 0 })).toEqual({
      lines: [],
      code: 0,
    });
  });

  it("fails a run whose messages' ids were taken, without a second line for them", () => {
    expect(runEnding({ skipped: 0, notStored: 0, taken: 4, notExtracted: 0 })).toEqual({
      lines: [],
      code: 1,
    });
  });

  it("fails a run that left a segment unextracted", () => {
    expect(runEnding({ skipped: 0, notStored: 0, taken: 0, notExtracted: 3 }).code).toBe(1);
  });
});
