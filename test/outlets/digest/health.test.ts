import {
  buildDigest,
  channelDigests,
  type Digest,
  digestHtml,
  digestMarkdown,
  digestText,
  slackDigestPayload,
  snsDigestMessage,
  storeDigestSources,
} from "convoseg/digest";
import { describe, expect, it } from "vitest";
import { answerIds, healthFigures } from "../../../lib/outlets/digest/health.js";
import type { DigestHealth } from "../../../lib/outlets/digest/types.js";
import { asked, DAY, memorySources, result, SINCE, UNTIL } from "./fixtures.js";

const HOSTILE = "<b>@here</b>|*x*";

/** `help`: four questions in the period (two answered, by ann and a hostile name), one before. */
function sources() {
  return memorySources({
    results: [
      result("help", "s0", SINCE - DAY, SINCE - DAY, [
        asked("old", SINCE - DAY, "answered", ["a-old"]),
      ]),
      result("help", "s1", SINCE, SINCE + DAY, [
        asked("q1", SINCE, "answered", ["a1"], "cy"),
        asked("q2", SINCE + 3_600_000, "answered", ["a2", "a-self"], "cy"),
        asked("q3", SINCE + DAY, "unanswered"),
        asked("q4", SINCE + DAY, "unclear"),
      ]),
      result("quiet", "s9", SINCE, SINCE),
    ],
    answers: [
      { channel: "help", id: "a1", ts: SINCE + 120_000, author: "ann" },
      { channel: "help", id: "a2", ts: SINCE + 3_600_000 + 600_000, author: HOSTILE },
      // The asker answering their own question is no answerer.
      { channel: "help", id: "a-self", ts: SINCE + 3_600_000 + 60_000, author: "cy" },
    ],
  });
}

const period = { since: SINCE, until: UNTIL, now: new Date(UNTIL) };

describe("the digest's health table", () => {
  it("counts the period's questions per channel, and names answerers only when told the opt-out", async () => {
    const anonymous = await buildDigest(sources(), { channels: ["help", "quiet"], ...period });
    // A channel with no question in the period has no row.
    expect(anonymous.health).toEqual([
      {
        channel: "help",
        questions: 4,
        answered: 2,
        unanswered: 1,
        unclear: 1,
        answeredShare: 0.5,
        firstAnswer: { measured: 2, medianMs: 60_000, p90Ms: 120_000, clockMs: 60_000 },
      },
    ]);
    const named = await buildDigest(sources(), {
      channels: ["help"],
      ...period,
      answerers: { optOut: [] },
    });
    expect(named.health?.[0].answerers).toEqual([
      { name: HOSTILE, answers: 1 },
      { name: "ann", answers: 1 },
    ]);
    const optedOut = await buildDigest(sources(), {
      channels: ["help"],
      ...period,
      answerers: { optOut: ["ANN"] },
    });
    expect(optedOut.health?.[0].answerers).toEqual([{ name: HOSTILE, answers: 1 }]);
  });

  it("names answerers through a channel's digest (the API's route) only when given the opt-out", async () => {
    const told = channelDigests(sources(), { answerers: { optOut: [HOSTILE] } });
    const digest = await told.digest("help", { since: SINCE, until: UNTIL });
    expect(digest.health?.[0].answerers).toEqual([{ name: "ann", answers: 1 }]);
    const untold = await channelDigests(sources()).digest("help", { since: SINCE, until: UNTIL });
    expect(untold.health?.[0]).not.toHaveProperty("answerers");
  });

  it("is absent when no channel had a question in the period", async () => {
    const digest = await buildDigest(sources(), { channels: ["quiet"], ...period });
    expect(digest).not.toHaveProperty("health");
  });

  it("reads only the answers of the period's answered questions", () => {
    expect(
      answerIds(
        [
          { questions: [asked("a", SINCE, "answered", ["x", "y"]), asked("b", SINCE, "unclear")] },
          {
            questions: [
              asked("c", SINCE - 1, "answered", ["z"]),
              asked("d", SINCE, "answered", ["x"]),
            ],
          },
          {},
        ],
        { since: SINCE, until: UNTIL },
      ),
    ).toEqual(["x", "y"]);
  });

  it("words each figure, with a dash where there is nothing to say", () => {
    const row: DigestHealth = {
      channel: "c",
      questions: 0,
      answered: 0,
      unanswered: 0,
      unclear: 0,
      answeredShare: null,
      firstAnswer: { measured: 0, medianMs: null, p90Ms: null },
    };
    expect(healthFigures(row, (s) => s)).toEqual({
      answered: "– (0 of 0)",
      firstAnswer: "–",
      answerers: undefined,
    });
    expect(healthFigures({ ...row, answerers: [] }, (s) => s).answerers).toBe("none named");
    expect(
      healthFigures(
        {
          ...row,
          questions: 3,
          answered: 2,
          answeredShare: 2 / 3,
          firstAnswer: { measured: 2, medianMs: 65_000, p90Ms: 7_200_000 },
          answerers: [{ name: "a|b", answers: 2 }],
        },
        (s) => s.replace("|", "/"),
      ),
    ).toEqual({
      answered: "67% (2 of 3)",
      firstAnswer: "1m 5s median, 2h p90 (over 2)",
      answerers: "a/b (2)",
    });
    // Times of a log that keeps minutes: an answer in the asking's minute took under one.
    expect(
      healthFigures(
        { ...row, firstAnswer: { measured: 3, medianMs: 0, p90Ms: 120_000, clockMs: 60_000 } },
        (s) => s,
      ).firstAnswer,
    ).toBe("under 1m median, 2m p90 (over 3)");
  });
});

describe("the health table in every form", () => {
  const digest = async (answerers?: { optOut: string[] }): Promise<Digest> =>
    buildDigest(sources(), { channels: ["help"], ...period, ...(answerers && { answerers }) });

  it("Markdown: a table after the recurring questions, the answerers' column only when named", async () => {
    const md = digestMarkdown(await digest({ optOut: [] }));
    expect(md).toContain("## Community health");
    expect(md).toContain(
      "| Channel | Questions | Answered | First answer | Unanswered | Top answerers |",
    );
    expect(md).toMatch(
      /\| help \| 4 \| 50% \(2 of 4\) \| 1m median, 2m p90 \(over 2\) \| 1 \| .*ann \(1\) \|/,
    );
    // A name is chat text: no markup, mention or cell break comes of it.
    expect(md).toContain("\\<b\\>\\@here\\</b\\>\\|\\*x\\*");
    expect(md.indexOf("## Community health")).toBeLessThan(md.indexOf("## Unanswered"));
    const anonymous = digestMarkdown(await digest());
    expect(anonymous).toContain("| Channel | Questions | Answered | First answer | Unanswered |\n");
    expect(anonymous).not.toContain("ann (1)");
  });

  it("text: one line per channel", async () => {
    const text = digestText(await digest({ optOut: [] }));
    expect(text).toContain(
      "Community health\n  - help: 4 questions, 50% (2 of 4) answered, first answer 1m median, 2m p90 (over 2), 1 unanswered; top answerers: <b>@here</b>|*x* (1), ann (1)",
    );
    expect(digestText(await digest())).not.toContain("top answerers");
  });

  it("HTML: a table, every name escaped", async () => {
    const html = digestHtml(await digest({ optOut: [] }));
    expect(html).toContain("<h2>Community health</h2>");
    expect(html).toContain("<th>Top answerers</th>");
    expect(html).toContain("&lt;b&gt;@here&lt;/b&gt;|*x* (1), ann (1)");
    expect(html).not.toContain("<b>@here");
    const anonymous = digestHtml(await digest());
    expect(anonymous).toContain('<td class="n">4</td><td class="n">50% (2 of 4)</td>');
    expect(anonymous).not.toContain("Top answerers");
  });

  it("Slack: a section, names never a mention", async () => {
    const payload = slackDigestPayload(await digest({ optOut: [] }));
    const health = (payload.blocks ?? []).find((b) =>
      b.text?.text.startsWith("*Community health*"),
    );
    expect(health?.text?.text).toContain("help: 4 questions, 50% (2 of 4) answered");
    expect(health?.text?.text).toContain("ann (1)");
    expect(health?.text?.text).not.toMatch(/<b>|@here/);
    const one = await digest();
    const single = {
      ...one,
      health: [{ ...(one.health?.[0] as DigestHealth), questions: 1, answered: 1 }],
    };
    const line = (slackDigestPayload(single).blocks ?? []).find((b) =>
      b.text?.text.startsWith("*Community health*"),
    );
    expect(line?.text?.text).toContain("help: 1 question, ");
    expect(line?.text?.text).not.toContain("top answerers");
  });

  it("a row without answerers among named ones says so with a dash", async () => {
    const named = await digest({ optOut: [] });
    const row = named.health?.[0] as DigestHealth;
    const { answerers: _, ...anonymous } = row;
    const mixed = { ...named, health: [row, { ...anonymous, channel: "other" }] };
    expect(digestMarkdown(mixed)).toMatch(/\| other \| 4 \| .* \| 1 \| – \|/);
    expect(digestHtml(mixed)).toContain('<td class="n">1</td><td>–</td></tr>');
  });

  it("SNS: the Markdown form's table", async () => {
    const message = snsDigestMessage(digestMarkdown(await digest({ optOut: [] })));
    expect(message).toContain("## Community health");
    expect(message).toContain("| help | 4 | 50% (2 of 4) |");
  });
});

describe("storeDigestSources' answers", () => {
  it("reads the answering messages by id: when and by whom, deleted and unknown ones left out", async () => {
    const asked: string[][] = [];
    const source = storeDigestSources(
      { listResults: async () => [], listSupports: async () => [] } as never,
      {
        getMessages: async (_channel, ids) => {
          asked.push([...ids]);
          return [
            { id: "a", ts: 1, author: "ann" },
            { id: "b", ts: 2 },
            { id: "c", ts: 3, deleted: true, author: "gone" },
            { id: "d" },
            { ts: 5 },
          ];
        },
      },
    );
    expect(await source.answers("help", [])).toEqual([]);
    expect(asked).toEqual([]);
    expect(await source.answers("help", ["a", "b", "c", "d"])).toEqual([
      { id: "a", ts: 1, author: "ann" },
      { id: "b", ts: 2 },
    ]);
  });
});
