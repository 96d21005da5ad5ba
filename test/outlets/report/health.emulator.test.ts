/**
 * The report's health charts in Chromium: drawn (their bars and lines on the canvas, in the
 * colors the legend gives), titled and labelled, names shown as text, the opt-out kept, an empty
 * state that says why, and a channel picked from the others.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StoredQuestion } from "convoseg/knowledge/store";
import { buildReport, loadReportAssets, type ReportInput, renderReportHtml } from "convoseg/report";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACTS, launchChromium, openReport, tempDir } from "./support.js";

const DAY = 86_400_000;
/** The page's series colors (lib/outlets/report/page/health.ts), which the legend shows. */
const HEALTH_COLORS = {
  asked: "#93c5fd",
  answered: "#15803d",
  median: "#1e40af",
  p90: "#c2410c",
} as const;
const START = Date.UTC(2026, 0, 5);
const HOSTILE = '<b onmouseover="globalThis.__pwned=1">mallory</b>';

let browser: BrowserContext;
const dir = tempDir();

beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);
afterAll(() => browser?.close());

type Message = NonNullable<ReportInput["messages"]>[number];

/**
 * `help`: ten days, a conversation a day asking a question; most are answered (by ann, by
 * mallory's hostile name, by bob who opted out), a few wait. `ops`: conversations, no question.
 */
function input(optOut?: string[]): ReportInput {
  const messages: Message[] = [];
  const segments: ReportInput["segments"][number][] = [];
  const candidates: NonNullable<ReportInput["candidates"]>[number][] = [];
  const answerers = ["ann", HOSTILE, "bob", "ann"];
  for (let d = 0; d < 10; d++) {
    for (const channel of ["help", "ops"]) {
      const t0 = START + d * DAY + 9 * 3_600_000;
      const ids = [`${channel}${d}-q`, `${channel}${d}-a`];
      const wait = (d + 1) * 90_000;
      messages.push({ id: ids[0], ts: t0, channel, user: "newcomer" });
      messages.push({ id: ids[1], ts: t0 + wait, channel, user: answerers[d % 4] });
      segments.push({
        channel,
        segmentId: `${channel}-s${d}`,
        messageIds: ids,
        late: false,
        belongsAfter: null,
        first: { id: ids[0], ts: t0 },
        last: { id: ids[1], ts: t0 + wait },
      });
      const answered = d % 3 !== 2;
      const questions: StoredQuestion[] =
        channel === "ops"
          ? []
          : [
              {
                id: `q${d}`,
                question: `how do I fix ${d}?`,
                status: answered ? "answered" : "unanswered",
                askedId: ids[0],
                askedTs: t0,
                askedBy: "newcomer",
                answerIds: answered ? [ids[1]] : [],
              },
            ];
      candidates.push({
        channel,
        segmentId: `${channel}-s${d}`,
        model: "offline",
        promptVersion: "t",
        usage: {
          calls: 1,
          inputTokens: 1,
          outputTokens: 1,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
        candidates: [],
        ...(channel === "help" && { questions }),
      } as NonNullable<ReportInput["candidates"]>[number]);
    }
  }
  const now = START + 11 * DAY;
  return {
    segments,
    candidates,
    messages,
    settle: 3_600_000,
    now,
    generatedAt: now,
    ...(optOut && { optOut }),
  };
}

async function open(name: string, report: ReportInput): Promise<{ page: Page; errors: string[] }> {
  const out = join(dir, `${name}.html`);
  writeFileSync(out, renderReportHtml(buildReport(report), await loadReportAssets()));
  return openReport(browser, out);
}

const texts = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((elements) => elements.map((e) => e.textContent));

/** How many pixels of the panel's chart canvas are `color` (#rrggbb), within a little. */
function pixelsOf(page: Page, panel: string, color: string): Promise<number> {
  // A string: this project's types have no DOM; the page runs it.
  return page.evaluate(`(() => {
    const canvas = document.querySelector(${JSON.stringify(`${panel} canvas`)});
    const context = canvas?.getContext("2d");
    if (!canvas || !context) return -1;
    const want = [1, 3, 5].map((i) => Number.parseInt(${JSON.stringify(color)}.slice(i, i + 2), 16));
    const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (want.every((v, k) => Math.abs(data[i + k] - v) <= 6) && data[i + 3] > 200) n++;
    }
    return n;
  })()`);
}

describe("the report's health charts in Chromium", () => {
  it("answer at a glance whether questions get answered and how fast, each chart drawn and labelled", async () => {
    const { page, errors } = await open("health", input(["BOB"]));
    const health = page.locator("#health");
    await health.scrollIntoViewIfNeeded();

    expect(await texts(page, "#health h2")).toEqual(["The community's health"]);
    // help has the questions: shown first, with ops to pick.
    expect(await page.locator("#health-channel").inputValue()).toBe("0");
    expect(await texts(page, "#health-channel option")).toEqual(["help", "ops"]);
    expect(await page.locator(".health-headline").textContent()).toBe(
      "70% of 10 questions got an answer; half of the answers came within 7m 30s, 9 in 10 within 15m. 3 still wait.",
    );
    expect(await texts(page, "#health [data-stat] .value")).toEqual([
      "10",
      "70%",
      "7m 30s",
      "3",
      "10",
    ]);
    expect(await texts(page, ".health-panel h3")).toEqual([
      "Questions asked and answered, per day",
      "Time to first answer, per day",
      "Unanswered questions by age",
      "Who answers most",
      "Conversations per day",
    ]);
    // Legends name each series; bars and lines are on the canvas in their colors.
    expect(await texts(page, '[data-health="questions"] .legend-item')).toEqual([
      "asked",
      "answered",
      "share answered",
    ]);
    expect(await texts(page, '[data-health="first-answer"] .legend-item')).toEqual([
      "median",
      "p90",
    ]);
    // Pointing at a bar says its figures.
    const plot = page.locator('[data-health="questions"] .u-over');
    const box = await plot.boundingBox();
    if (box === null) throw new Error("no plot");
    await page.mouse.move(box.x + box.width * 0.05, box.y + box.height / 2);
    await expect
      .poll(() => page.locator('[data-health="questions"] .health-readout').textContent())
      .toBe("day 2026-01-05: asked 1 · answered 1 · share answered 100%");
    for (const [panel, color] of [
      ['[data-health="questions"]', HEALTH_COLORS.asked],
      ['[data-health="questions"]', HEALTH_COLORS.answered],
      ['[data-health="first-answer"]', HEALTH_COLORS.median],
      ['[data-health="first-answer"]', HEALTH_COLORS.p90],
    ] as const) {
      expect(await pixelsOf(page, panel, color), `${panel} ${color}`).toBeGreaterThan(20);
    }
    expect(await page.locator('[data-health="conversations"] canvas').count()).toBeGreaterThan(0);
    // Ages at the data's last day: the three waiting were asked 2, 5 and 8 days before it.
    expect(await texts(page, '[data-health="unanswered"] .health-bar-value')).toEqual([
      "0",
      "2",
      "1",
      "0",
    ]);
    // The hostile name is text; bob opted out and is not named, though his answers count.
    expect(await texts(page, '[data-health="answerers"] .health-bar-label')).toEqual([
      "ann",
      HOSTILE,
    ]);
    expect(await texts(page, '[data-health="answerers"] .health-bar-value')).toEqual(["4", "2"]);
    expect(await page.locator("#health b").count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "report-health.png"), fullPage: false });
    await health.screenshot({ path: join(ARTIFACTS, "report-health-section.png") });

    // A channel without questions says so, and still shows how busy it is.
    await page.locator("#health-channel").selectOption("1");
    await expect
      .poll(() => page.locator(".health-headline").textContent())
      .toBe("No questions yet in this channel.");
    expect(await page.locator(".health-empty").count()).toBe(4);
    expect(await page.locator(".health-empty").first().textContent()).toMatch(
      /^No questions yet: /,
    );
    expect(await page.locator('[data-health="conversations"] canvas').count()).toBeGreaterThan(0);
    await page.setViewportSize({ width: 700, height: 1000 });
    await expect
      .poll(() =>
        page.locator('[data-health="conversations"] .uplot').evaluate((e) => e.clientWidth),
      )
      .toBeLessThan(700);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });

  it("says there is nothing to show when the report has no channels' health", async () => {
    const { page, errors } = await open("empty", {
      segments: [],
      settle: 1,
      now: START,
      generatedAt: START,
    });
    expect(await texts(page, "#health p")).toEqual(["No data."]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
