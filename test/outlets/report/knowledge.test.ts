import type { StoredQuestion } from "convoseg/knowledge/store";
import {
  buildReport,
  parseSegmentAnchor,
  type ReportInput,
  renderReportHtml,
  reportSegmentHref,
  segmentAnchor,
} from "convoseg/report";
import { describe, expect, it } from "vitest";

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);
const TOPICS = ["grub bootloader", "wifi driver", "GRUB boot loader", "kernel panic"];

/** Ten daily conversations of `help`, each asking a question about its topic. */
function input(withQuestions: boolean): ReportInput {
  const messages: NonNullable<ReportInput["messages"]>[number][] = [];
  const segments: ReportInput["segments"][number][] = [];
  const candidates = [];
  for (let s = 0; s < 10; s++) {
    const t0 = START + s * DAY;
    const ids = [0, 1, 2].map((i) => `m${s}-${i}`);
    ids.forEach((id, i) => {
      messages.push({ id, ts: t0 + i * 60_000, channel: "help", user: ["ann", "bob"][i % 2] });
    });
    segments.push({
      channel: "help",
      segmentId: `seg${s}`,
      messageIds: ids,
      late: false,
      belongsAfter: null,
      first: { id: ids[0], ts: t0 },
      last: { id: ids[2], ts: t0 + 120_000 },
    });
    const answered = s % 2 === 0;
    const question: StoredQuestion = {
      id: `q${s}`,
      question: `about ${TOPICS[s % 4]} <b>?</b>`,
      status: answered ? "answered" : "unanswered",
      askedId: ids[0],
      askedTs: t0,
      ...(answered ? { answer: "reinstall" } : {}),
      answerIds: answered ? [ids[1]] : [],
    };
    candidates.push({
      channel: "help",
      segmentId: `seg${s}`,
      model: "offline",
      promptVersion: "t",
      usage: { calls: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [
        {
          topic: TOPICS[s % 4],
          reason: "said",
          confidence: 0.5,
          tags: [],
          subjective: false,
          messageIds: [ids[0], ids[2]] as [string, string],
        },
      ],
      ...(withQuestions ? { questions: [question] } : {}),
    });
  }
  return {
    segments,
    candidates,
    messages,
    settle: 3_600_000,
    now: START + 20 * DAY,
    generatedAt: START + 20 * DAY,
  };
}

describe("the report's questions and digest", () => {
  it("lists the questions oldest first, answered with answers, and digests the data's last seven days", () => {
    const { knowledge } = buildReport(input(true)).data;

    expect(knowledge?.questions.unanswered.map((q) => q.segmentId)).toEqual([
      "seg1",
      "seg3",
      "seg5",
      "seg7",
      "seg9",
    ]);
    expect(knowledge?.questions.answered.map((q) => [q.segmentId, q.answer])).toEqual(
      ["seg0", "seg2", "seg4", "seg6", "seg8"].map((s) => [s, "reinstall"]),
    );
    const digest = knowledge?.digest;
    // The last message is on day 9 (2026-01-10): the week is 2026-01-04 to 2026-01-10.
    expect(digest?.since).toBe(START + 3 * DAY);
    expect(digest?.until).toBe(START + 10 * DAY);
    expect(digest?.activity[0]).toMatchObject({ messages: 21, conversations: 7, activePeople: 2 });
    expect(digest?.topics.map((t) => [t.topic, t.kind, t.segments, t.earlierSegments])).toEqual([
      ["kernel panic", "new", 2, 0],
      ["grub bootloader", "recurring", 3, 2],
      ["wifi driver", "recurring", 2, 1],
    ]);
    expect(digest?.unanswered.map((q) => q.segmentId)).toEqual(["seg3", "seg5", "seg7", "seg9"]);
  });

  it("digests the user's own chat's last week, not the generated sample's later made-up one", () => {
    const own = input(false);
    // The sample's channel, a year on: its week would have set the digest's.
    const later = (ts: number) => ts + 365 * DAY;
    const demo = {
      messages: (own.messages ?? []).map((m) => ({
        ...m,
        channel: "announcements",
        ts: later(m.ts),
      })),
      segments: own.segments.map((s) => ({
        ...s,
        channel: "announcements",
        first: { ...s.first, ts: later(s.first.ts) },
        last: { ...s.last, ts: later(s.last.ts) },
      })),
    };
    const both = {
      ...own,
      messages: [...(own.messages ?? []), ...demo.messages],
      segments: [...own.segments, ...demo.segments],
    };
    const marked = buildReport({ ...both, sampleChannels: ["announcements"] }).data;
    expect(marked.knowledge?.digest?.until).toBe(START + 10 * DAY);
    expect(marked.knowledge?.digest?.channels).toEqual(["help"]);
    expect(marked.channels.map((c) => [c.name, c.sample])).toEqual([
      ["help", undefined],
      ["announcements", true],
    ]);
    // Unmarked, the later chat is the data's end, and its channel sorts first by id, as before.
    const unmarked = buildReport(both).data;
    expect(unmarked.knowledge?.digest?.until).toBe(START + 375 * DAY);
    expect(unmarked.channels.map((c) => c.name)).toEqual(["announcements", "help"]);
  });

  it("lists the recurring questions most asked first, each linked by its latest asking, and the week's in the digest", () => {
    const { knowledge } = buildReport(input(true)).data;
    expect(
      knowledge?.faq.entries.map((f) => [f.question, f.count, f.answered, f.segmentId]),
    ).toEqual([
      ["about wifi driver <b>?</b>", 3, 0, "seg9"],
      ["about grub bootloader <b>?</b>", 3, 3, "seg8"],
      ["about kernel panic <b>?</b>", 2, 0, "seg7"],
      ["about GRUB boot loader <b>?</b>", 2, 2, "seg6"],
    ]);
    const grub = knowledge?.faq.entries[1];
    expect(grub).toMatchObject({
      channel: "help",
      inPeriod: 3,
      firstAsked: START,
      lastAsked: START + 8 * DAY,
      askedId: "m8-0",
      answer: { text: "reinstall", answerIds: ["m8-1"], corrected: false },
    });
    expect(knowledge?.faq.omitted).toBe(0);
    expect(grub).not.toHaveProperty("permalink");
    // The digest's week (the data's last seven days) holds them too, counted in it.
    expect(knowledge?.digest?.faq?.map((f) => [f.count, f.inPeriod]).slice(0, 2)).toEqual([
      [3, 2],
      [3, 2],
    ]);
    const html = renderReportHtml(buildReport(input(true)), { script: "", style: "" });
    expect(html).toContain('<section id="faq" aria-label="recurring questions">');
    expect(buildReport(input(false)).data.knowledge?.faq).toEqual({ entries: [], omitted: 0 });
  });

  it("lists at most 20 recurring questions across channels and counts the rest", () => {
    const words =
      "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor".split(
        " ",
      );
    const line = (channel: string, s: number, thread?: string) => ({
      channel,
      segmentId: `seg${s}`,
      model: "offline",
      promptVersion: "t",
      usage: { calls: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [],
      ...(thread === undefined ? {} : { thread }),
      questions: words.map(
        (w, i): StoredQuestion => ({
          id: `q${s}-${i}`,
          question: `how do I configure ${w}?`,
          status: "unanswered",
          askedId: `${channel}-${s}-${i}`,
          askedTs: START + s * DAY + i,
          answerIds: [],
        }),
      ),
    });
    const many: ReportInput = {
      segments: [],
      // The second channel's askings again, in a thread: each channel's questions group apart.
      candidates: [line("help", 0), line("help", 1, "t1"), line("dev", 2), line("dev", 3)],
      settle: 3_600_000,
      now: START + 20 * DAY,
      generatedAt: START + 20 * DAY,
    };
    const { faq } = buildReport(many).data.knowledge ?? { faq: undefined };
    expect(faq?.entries).toHaveLength(20);
    expect(faq?.omitted).toBe(2 * words.length - 20);
    // Ties on count: the latest asked first, so dev's (asked later) lead.
    expect(faq?.entries[0]).toMatchObject({
      channel: "dev",
      question: "how do I configure victor?",
    });
    // Asked as often and as lately: by channel, then by wording.
    const tied = buildReport({
      ...many,
      candidates: ["dev", "help"].flatMap((channel) =>
        [0, 1].map((s) => {
          const l = line(channel, s);
          return { ...l, questions: l.questions.map((q) => ({ ...q, askedTs: START + s })) };
        }),
      ),
    }).data.knowledge?.faq.entries.map((f) => `${f.channel} ${f.question}`);
    expect(tied?.slice(0, 3)).toEqual([
      "dev how do I configure alpha?",
      "dev how do I configure bravo?",
      "dev how do I configure charlie?",
    ]);
    // dev's 22 before help's: the first 20 are all of dev.
    expect(tied?.every((t) => t.startsWith("dev "))).toBe(true);
    const help = buildReport({ ...many, candidates: many.candidates?.slice(0, 2) }).data.knowledge;
    expect(help?.faq.entries[0]).toMatchObject({ segmentId: "seg1", thread: "t1", count: 2 });
    expect(help?.faq.entries[0]).not.toHaveProperty("permalink");
  });

  it("has no questions from lines without them, and embeds both sections' data safely", () => {
    const report = buildReport(input(false));
    expect(report.data.knowledge?.questions).toEqual({
      unanswered: [],
      unclear: [],
      answered: [],
      omitted: { unanswered: 0, unclear: 0, answered: 0 },
    });
    const html = renderReportHtml(buildReport(input(true)), { script: "", style: "" });
    expect(html).toContain('<section id="questions"');
    expect(html).toContain('<section id="digest"');
    expect(html).not.toContain("<b>?</b>");
  });

  it("links each question and topic to its Slack message, and nothing of another platform", () => {
    const slack = input(true);
    // Slack's ids: a channel like C0HELP, a message id its ts; the first question asked in a thread.
    const ts = (id: string) => `${1767225600 + Number(id.replace(/\D/g, ""))}.000100`;
    const ids = new Map((slack.messages ?? []).map((m) => [m.id, ts(m.id)]));
    const slackId = (id: string) => ids.get(id) as string;
    const asSlack: ReportInput = {
      ...slack,
      messages: (slack.messages ?? []).map((m) => ({
        ...m,
        id: slackId(m.id),
        channel: "C0HELP",
        platform: "slack",
        ...(m.id === "m1-0" ? { thread: "1767225000.000100" } : {}),
      })),
      segments: slack.segments.map((s) => ({
        ...s,
        channel: "C0HELP",
        messageIds: s.messageIds.map(slackId),
        first: { ...s.first, id: slackId(s.first.id) },
        last: { ...s.last, id: slackId(s.last.id) },
      })),
      candidates: (slack.candidates ?? []).map((c) => ({
        ...c,
        channel: "C0HELP",
        candidates: c.candidates.map((t) => ({
          ...t,
          messageIds: t.messageIds?.map(slackId) as [string, string],
        })),
        questions: (c as { questions?: StoredQuestion[] }).questions?.map((q) => ({
          ...q,
          askedId: slackId(q.askedId),
          answerIds: q.answerIds.map(slackId),
        })),
      })),
    };
    const { knowledge } = buildReport(asSlack).data;
    const first = knowledge?.questions.unanswered[0];
    expect(first?.permalink).toBe(
      `https://slack.com/archives/C0HELP/p${slackId("m1-0").replace(".", "")}?thread_ts=1767225000.000100&cid=C0HELP`,
    );
    expect(knowledge?.faq.entries.length).toBeGreaterThan(0);
    const links = [
      ...(knowledge?.faq.entries ?? []),
      ...(knowledge?.questions.answered ?? []),
      ...(knowledge?.digest?.topics ?? []),
    ].map((e) => e.permalink);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links)
      expect(link).toMatch(/^https:\/\/slack\.com\/archives\/C0HELP\/p\d+$/);
    // The same chat from IRC, without a platform's link: none.
    const plain = buildReport(input(true)).data.knowledge;
    expect(
      [...(plain?.questions.unanswered ?? []), ...(plain?.digest?.topics ?? [])].some(
        (e) => "permalink" in e,
      ),
    ).toBe(false);
  });

  it("links each question and topic to its Discord message by the guild the messages carry", () => {
    const chat = input(true);
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    const ids = new Map(
      (chat.messages ?? []).map((m, i) => [m.id, `${1195000000000000000n + BigInt(i + 1)}`]),
    );
    const snowflake = (id: string) => ids.get(id) as string;
    const asDiscord: ReportInput = {
      ...chat,
      messages: (chat.messages ?? []).map((m) => ({
        ...m,
        id: snowflake(m.id),
        channel,
        platform: "discord",
        guild,
      })),
      segments: chat.segments.map((s) => ({
        ...s,
        channel,
        messageIds: s.messageIds.map(snowflake),
        first: { ...s.first, id: snowflake(s.first.id) },
        last: { ...s.last, id: snowflake(s.last.id) },
      })),
      candidates: (chat.candidates ?? []).map((c) => ({
        ...c,
        channel,
        candidates: c.candidates.map((t) => ({
          ...t,
          messageIds: t.messageIds?.map(snowflake) as [string, string],
        })),
        questions: (c as { questions?: StoredQuestion[] }).questions?.map((q) => ({
          ...q,
          askedId: snowflake(q.askedId),
          answerIds: q.answerIds.map(snowflake),
        })),
      })),
    };
    const { knowledge } = buildReport(asDiscord).data;
    expect(knowledge?.questions.unanswered[0]?.permalink).toBe(
      `https://discord.com/channels/${guild}/${channel}/${snowflake("m1-0")}`,
    );
    const links = [
      ...(knowledge?.questions.answered ?? []),
      ...(knowledge?.digest?.topics ?? []),
      ...(knowledge?.digest?.unanswered ?? []),
    ].map((e) => e.permalink);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links)
      expect(link).toMatch(new RegExp(`^https://discord\\.com/channels/${guild}/${channel}/\\d+$`));
  });

  it("names a segment by an anchor the page reads back, whatever its channel and id hold", () => {
    for (const [channel, segmentId] of [
      ["help", "seg1"],
      ["a/b #c", "x/y?z&w"],
      ["ünï", "%41"],
    ]) {
      const anchor = segmentAnchor(channel, segmentId);
      expect(anchor).toMatch(/^segment=[^/#?&]+\/[^/#?&]+$/);
      expect(parseSegmentAnchor(`#${anchor}`)).toEqual({ channel, segmentId });
    }
    expect(reportSegmentHref({ channel: "help", segmentId: "s1" }, "r.html")).toBe(
      "r.html#segment=help/s1",
    );
    expect(parseSegmentAnchor("#topics")).toBeUndefined();
    expect(parseSegmentAnchor("#segment=help")).toBeUndefined();
    expect(parseSegmentAnchor("#segment=%E0/x")).toBeUndefined();
  });
});
