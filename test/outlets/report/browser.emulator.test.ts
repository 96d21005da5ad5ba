import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildReport, loadReportAssets, renderReportHtml, segmentAnchor } from "convoseg/report";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { reportCommand } from "../../../cli/report/report.js";
import { runCommand as runPipeline } from "../../../cli/run/run.js";
import { LINKED_MESSAGES, LINKED_SEGMENTS, LINKED_T0 } from "./conversation-fixtures.js";
import { ALL_MESSAGES, CANDIDATES, INJECTION, MESSAGES, NOW, OPS, SEGMENTS } from "./fixtures.js";
import {
  ARTIFACTS,
  launchChromium,
  openReport,
  runCommand,
  tempDir,
  writeJsonLines,
} from "./support.js";
import { ROOT_AUTHOR, THREAD_MESSAGES, THREAD_NOW, THREAD_SEGMENTS } from "./thread-fixtures.js";

const dir = tempDir();
let browser: BrowserContext;

beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);
afterAll(() => browser?.close());

const texts = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((elements) => elements.map((e) => e.textContent));

/** The report command's page of these inputs (written as `<name>-*.jsonl`), at `<name>.html`. */
async function writeReport(
  name: string,
  inputs: {
    segments: readonly unknown[];
    candidates?: readonly unknown[];
    messages?: readonly unknown[];
  },
  args: string[],
  now: number,
): Promise<{ out: string; code: number; stderr: string }> {
  const out = join(dir, `${name}.html`);
  const files = (["segments", "candidates", "input"] as const).flatMap((flag) => {
    const values = inputs[flag === "input" ? "messages" : flag];
    return values === undefined
      ? []
      : [`--${flag}`, writeJsonLines(join(dir, `${name}-${flag}.jsonl`), values)];
  });
  const { code, stderr } = await runCommand(reportCommand, [...files, ...args, "--out", out], now);
  return { out, code, stderr };
}

/** {@link writeReport}, which must succeed, opened in the browser. */
async function openedReport(
  ...args: Parameters<typeof writeReport>
): Promise<Awaited<ReturnType<typeof openReport>>> {
  const { out, code, stderr } = await writeReport(...args);
  expect(code, stderr).toBe(0);
  return openReport(browser, out);
}

async function showChannel(page: Page, name: string): Promise<void> {
  await page.locator(".channel-row", { has: page.locator(".name", { hasText: name }) }).click();
  await page.locator(".channel-name", { hasText: name }).waitFor();
}

async function selectSegment(page: Page, index: number): Promise<void> {
  await page.locator(`.segment-row[data-segment="${index}"]`).click();
  await page.locator(".details h3", { hasText: `Segment #${index + 1}` }).waitFor();
}

/** The markup in chat text, names and topics is shown as text, and none of it ran or parsed. */
async function expectInjectionInert(page: Page): Promise<void> {
  await showChannel(page, OPS);
  await selectSegment(page, 0);
  // Polled: the texts are read after the page is first drawn.
  await expect
    .poll(async () => (await texts(page, ".details .message .text")).slice(0, 2))
    .toEqual([`deploy notes ${INJECTION}`, "<em>not bold</em>"]);
  expect((await texts(page, ".details .message .author")).slice(0, 2)).toEqual([
    "<b>mallory</b>",
    "eve",
  ]);
  expect(await page.locator(".channel-name").textContent()).toBe(OPS);
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  // The page makes none of these elements itself: any would have come from the data.
  expect(await page.locator("img, b, i, em, script[src]").count()).toBe(0);
}

describe("the report in Chromium", () => {
  it("shows the summary, each cut with its cause, a segment's messages and topics, and chat as text", async () => {
    const { out, ...report } = await writeReport(
      "known",
      { segments: SEGMENTS, candidates: CANDIDATES, messages: ALL_MESSAGES },
      ["--settle", "1h", "--now", String(NOW)],
      NOW,
    );
    expect(report.stderr).toMatch(
      /^report: wrote .*known\.html \(0\.\d MB\): 2 channels, 5 segments\n$/,
    );
    expect(report.code).toBe(0);
    const { page, errors } = await openReport(browser, out);

    const stat = (name: string) => page.locator(`[data-stat="${name}"] .value`).textContent();
    expect(await stat("segments")).toBe("5");
    expect(await stat("late")).toBe("1");
    expect(await stat("open")).toBe("1");
    expect(await stat("dropped")).toBe("1");
    expect(await stat("calls")).toBe("5");
    expect(await stat("tokens")).toBe("310");

    await showChannel(page, "help");
    expect(await page.locator(".segment-row").count()).toBe(4);
    expect(await texts(page, ".segment-row .cut")).toEqual([
      "start",
      "silence 2h 57m",
      "late, after #1",
      "size cap, largest gap 10m",
    ]);

    await selectSegment(page, 1);
    expect(await texts(page, ".details .message time")).toEqual([
      "12:00:00",
      "12:01:00",
      "12:02:00",
      "12:03:00",
    ]);
    expect(await texts(page, ".details .message .author")).toEqual(["bo", "bo", "bo", "bo"]);
    expect(await page.locator(".details .message .text").first().textContent()).toBe(
      "the wifi driver drops every few minutes",
    );
    expect(await texts(page, ".details .topic-name")).toEqual(["wifi driver", "firmware"]);
    // The first topic's evidence is messages 2 and 3; the second has no range.
    expect(
      await page
        .locator(".message.evidence")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-index"))),
    ).toEqual(["1", "2"]);
    await page.locator(".topic .evidence").first().click();
    expect(await page.locator(".message.focus").count()).toBe(2);
    // The arrow keys move along the table; the late segment is the next one.
    await page.locator('.segment-row[data-segment="1"]').press("ArrowDown");
    await page.locator(".details h3", { hasText: "Segment #3" }).waitFor();
    expect(await page.locator(".details .cut").textContent()).toBe("late, after #1");
    expect(await texts(page, ".details .message .text")).toEqual(["sorry, late reply"]);
    await page.locator(".segment-row.selected").press("ArrowUp");
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "report.png"), fullPage: true });

    await expectInjectionInert(page);
    expect(await texts(page, ".details .topic-name")).toEqual([
      `<img src=x onerror="window.__pwned = 3">`,
    ]);
    expect(errors).toEqual([]);
  });

  it("leads with each channel's topics, each leading to the segments that support it", async () => {
    const { page, errors } = await openedReport(
      "topics",
      { segments: SEGMENTS, candidates: CANDIDATES, messages: ALL_MESSAGES },
      ["--settle", "1h", "--now", String(NOW)],
      NOW,
    );
    await page.screenshot({ path: join(ARTIFACTS, "report-topics.png") });

    // The first thing on the page, on the first screen; the busiest channel first.
    const first = await page.locator("body > section").first().getAttribute("id");
    expect(first).toBe("topics");
    expect((await page.locator("#topics").boundingBox())?.y).toBeLessThan(200);
    expect(await texts(page, ".topic-card .card-channel")).toEqual(["help", OPS]);
    const help = page.locator(".topic-card", {
      has: page.locator(".card-channel", { hasText: "help" }),
    });
    expect(
      await help
        .locator(".topic-row")
        .evaluateAll((rows) =>
          rows.map((row) =>
            [".topic-name", ".support", ".when"].map((c) => row.querySelector(c)?.textContent),
          ),
        ),
    ).toEqual([
      ["wifi driver", "2 conversations", "2025-01-06 12:01–12:14"],
      ["grub bootloader", "1 conversation", "2025-01-06 09:00–09:03"],
      ["firmware update", "1 conversation", "2025-01-06 12:13"],
      ["firmware", "1 conversation", "2025-01-06 12:00–12:03"],
    ]);
    expect(await texts(page, ".topic-card:nth-child(2) .topic-name")).toEqual([
      `<img src=x onerror="window.__pwned = 3">`,
    ]);

    // A topic shows its channel with only the segments that support it, the first selected
    // and the topic's evidence marked.
    await help.locator(".topic-row", { hasText: "wifi driver" }).click();
    await page.locator(".channel-name", { hasText: "help" }).waitFor();
    expect(await page.locator(".filter-bar").textContent()).toMatch(
      /^2 of 4 segments support wifi driver \(2025-01-06 12:01–12:14\)/,
    );
    const rows = () =>
      page
        .locator(".segment-row")
        .evaluateAll((all) => all.map((r) => r.getAttribute("data-segment")));
    expect(await rows()).toEqual(["1", "3"]);
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    expect(await page.locator(".details .message.focus").count()).toBe(2);
    // The arrow keys move along the segments listed.
    await page.locator('.segment-row[data-segment="1"]').press("ArrowDown");
    await page.locator(".details h3", { hasText: "Segment #4" }).waitFor();
    expect(await texts(page, ".details .message.focus .text")).toEqual([
      "the wifi driver works after the firmware update",
      "thanks, the wifi driver is fine now",
    ]);
    await page.locator(".filter-bar button", { hasText: "show all segments" }).click();
    expect(await rows()).toEqual(["0", "1", "2", "3"]);
    expect(await page.locator(".filter-bar").isHidden()).toBe(true);

    // From the keyboard too, and into another channel.
    await page.locator(".topic-card:nth-child(2) .topic-row").first().press("Enter");
    await page.locator(".channel-name", { hasText: OPS }).waitFor();
    expect(await rows()).toEqual(["0"]);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("shows a topic's other wordings under it as text, markup in them inert", async () => {
    const hostile = "<img src=x onerror='window.__pwned = 3'>";
    const worded = CANDIDATES.map((line) =>
      line.segmentId === "seg-o1"
        ? { ...line, candidates: [...line.candidates, { ...line.candidates[0], topic: hostile }] }
        : line,
    );
    const { page, errors } = await openedReport(
      "aliases",
      { segments: SEGMENTS, candidates: worded, messages: ALL_MESSAGES },
      ["--settle", "1h", "--now", String(NOW)],
      NOW,
    );
    const ops = page.locator(".topic-card", {
      has: page.locator(".card-channel", { hasText: OPS }),
    });
    expect(await ops.locator(".topic-row .topic-name").allTextContents()).toEqual([
      `<img src=x onerror="window.__pwned = 3">`,
    ]);
    expect(await ops.locator(".topic-row .aliases").allTextContents()).toEqual([
      `also: ${hostile}`,
    ]);
    // The help channel's topics were each said one way: no "also".
    const help = page.locator(".topic-card", {
      has: page.locator(".card-channel", { hasText: "help" }),
    });
    expect(await help.locator(".aliases").count()).toBe(0);
    await expectInjectionInert(page);
    expect(errors).toEqual([]);
  });

  it("is what run --report writes: the segments the run delivered, cut, extracted and escaped", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const out = join(dir, "run.html");
    const segments = join(dir, "run-segments.jsonl");
    const run = await runCommand(
      runPipeline,
      [
        "--input",
        writeJsonLines(join(dir, "run-messages.jsonl"), MESSAGES),
        "--out",
        segments,
        "--report",
        out,
        ...["--settle", "1h", "--max-size", "4", "--min-items", "2", "--tick", "15m"],
        // The timeline cut at silences and sizes: the cuts below are the channel's own.
        ...["--conversations", "contiguous"],
      ],
      NOW,
    );
    expect(run.stdout).toMatch(/^ {2}file:\/\/\S*\/run\.html +the report it wrote/m);
    expect(run.code, run.stderr).toBe(0);
    const delivered = readFileSync(segments, "utf8").trim().split("\n");
    const { page, errors } = await openReport(browser, out);

    expect(await page.locator('[data-stat="segments"] .value').textContent()).toBe(
      String(delivered.length),
    );
    // h11 is a conversation of one, below --min-items.
    expect(await page.locator('[data-stat="dropped"] .value').textContent()).toBe("1");
    await showChannel(page, "help");
    expect(await texts(page, ".segment-row .cut")).toEqual([
      "start",
      "silence 2h 57m",
      "size cap, largest gap 10m",
    ]);
    await selectSegment(page, 0);
    expect(await page.locator(".details .message").count()).toBe(4);
    expect(await page.locator(".details .topic").count()).toBeGreaterThan(0);
    expect(await page.locator(".details .message.evidence").count()).toBeGreaterThan(0);

    await expectInjectionInert(page);
    expect(errors).toEqual([]);
  }, 120_000);
});

describe("the report in Chromium: platform fields", () => {
  it("names a channel by its display name, marks replies with whom they answer and greys system lines", async () => {
    const T = Date.UTC(2025, 2, 3, 8);
    const where = { channel: "C024BE91L", platform: "slack", channelName: "general" };
    const messages = [
      { id: "1", ts: T, user: null, text: "ana has joined", kind: "system", ...where },
      { id: "2", ts: T + 60_000, user: "ana", text: "how do I pin?", ...where },
      { id: "3", ts: T + 120_000, user: "bo", text: "right-click it", replyTo: "2", ...where },
    ];
    const segments = [
      {
        segmentId: "s1",
        channel: "C024BE91L",
        late: false,
        belongsAfter: null,
        count: 3,
        first: { id: "1", ts: T },
        last: { id: "3", ts: T + 120_000 },
        messageIds: ["1", "2", "3"],
      },
    ];
    const { page, errors } = await openedReport(
      "platform",
      { segments, messages },
      ["--now", String(T + 86_400_000 * 3)],
      T,
    );
    await showChannel(page, "general");
    expect(await page.locator("h2", { has: page.locator(".channel-name") }).textContent()).toBe(
      "Channel general C024BE91L",
    );
    await selectSegment(page, 0);
    await expect
      .poll(() => texts(page, ".details .message .text"))
      .toEqual(["ana has joined", "how do I pin?", "↪ ana right-click it"]);
    expect(await page.locator(".details .message.system").count()).toBe(1);
    expect(await page.locator(".details .message .reply").getAttribute("title")).toBe(
      "reply to ana, 2025-03-03 08:01:00 UTC",
    );
    expect(errors).toEqual([]);
  });
});

describe("the report in Chromium: threads", () => {
  it("lists threads as rows under their channel, each leading to its segments, and a segment's reply links", async () => {
    const { page, errors } = await openedReport(
      "threads",
      { segments: THREAD_SEGMENTS, messages: THREAD_MESSAGES },
      ["--now", String(THREAD_NOW)],
      THREAD_NOW,
    );
    // Three threads, few enough to be listed unfolded under the channel's row.
    expect(await page.locator(".channel-row .fold").textContent()).toBe("▾ 3 threads");
    const threadRows = () => texts(page, ".thread-row .thread-name");
    expect(await threadRows()).toEqual([
      `↳ ${ROOT_AUTHOR}: “has anyone </tr></table><script>window.__pwned =…”`,
      "↳ eve: “is the staging database down again, or is it just me being…”",
      "↳ thread r8",
    ]);
    await page.locator(".channel-row .fold").click();
    expect(await page.locator(".thread-row").count()).toBe(0);
    await page.locator(".channel-row").press("ArrowRight");
    expect(await page.locator(".thread-row").count()).toBe(3);

    // A thread's row lists only its segments; the channel's own are marked apart from them.
    await page.locator(".thread-row").first().click();
    expect(await page.locator(".filter-bar").textContent()).toMatch(
      /^2 of 5 segments are the thread of <script>/,
    );
    const rows = () =>
      page
        .locator(".segment-row")
        .evaluateAll((all) => all.map((r) => [r.getAttribute("data-segment"), r.className]));
    expect((await rows()).map(([segment]) => segment)).toEqual(["1", "4"]);
    expect(await texts(page, ".segment-row .num:first-child")).toEqual(["↳ 2", "↳ 5"]);
    // Measured within the thread: 27 minutes from its previous reply.
    expect(await texts(page, ".segment-row .cut")).toEqual(["start", "size cap, largest gap 27m"]);
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    expect(await page.locator(".details .thread-label").textContent()).toBe(
      `${ROOT_AUTHOR}: “has anyone </tr></table><script>window.__pwned =…”`,
    );
    expect(await texts(page, ".details .reply-links li")).toEqual([
      `message 1 ↪ ${ROOT_AUTHOR}, outside this segment (in #1)`,
      "message 2 ↪ message 1 (bo)",
    ]);
    await page.screenshot({ path: join(ARTIFACTS, "report-threads.png"), fullPage: true });
    await page.locator(".filter-bar button", { hasText: "show all segments" }).click();
    expect((await rows()).map(([segment]) => segment)).toEqual(["0", "1", "2", "3", "4"]);
    expect((await rows()).map(([, c]) => c?.includes("in-thread"))).toEqual([
      false,
      true,
      true,
      true,
      true,
    ]);

    // The channel's own segment: a reply to a message the input does not have says so.
    await selectSegment(page, 0);
    expect(await texts(page, ".details .reply-links li")).toEqual([
      "message 3 ↪ a message, outside this segment (not in the input)",
    ]);
    await page.locator(".details .reply-links button").click();
    await page.locator('.details .message.flash[data-index="2"]').waitFor();

    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("img, b, i, em, script[src], table").count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it("lists linked conversations as rows in the order they started, and their inferred links as inferred", async () => {
    const out = join(dir, "linked.html");
    const report = buildReport({
      segments: LINKED_SEGMENTS,
      messages: LINKED_MESSAGES,
      settle: 10 * 60_000,
      now: LINKED_T0 + 86_400_000,
      generatedAt: LINKED_T0,
    });
    writeFileSync(out, renderReportHtml(report, await loadReportAssets()));
    const { page, errors } = await openReport(browser, out);
    expect(await page.locator('[data-stat="conversations"] .value').textContent()).toBe("2");
    expect(await page.locator(".channel-row .fold").textContent()).toBe(
      "▾ 1 thread, 2 conversations",
    );
    // The thread first, then the conversations, each led by the time it started.
    expect(await texts(page, ".thread-row .thread-name")).toEqual([
      "↳ bo: “lunch, anyone?”",
      "↳ 00:18 ana: “anyone know how to mount an ntfs disk?”",
      "↳ 00:19 bo: “lunch, anyone?”",
    ]);
    await page.locator(".conversation-row").first().click();
    expect(await page.locator(".filter-bar").textContent()).toMatch(
      /^2 of 5 segments are the conversation started by ana: “anyone know/,
    );
    // Measured within the conversation: 35 minutes from its previous message.
    expect(await texts(page, ".segment-row .cut")).toEqual(["new conversation", "silence 35m"]);
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    expect(await texts(page, ".details .facts dt")).toContain("conversation");
    expect(await texts(page, ".details h4")).toContain(
      "Replies (2: 1 by the platform, 1 inferred)",
    );
    expect(await texts(page, ".details .reply-links li")).toEqual([
      "message 2 ⇢ message 1 (ana), inferred",
      "message 3 ↪ message 1 (ana)",
    ]);
    await expect.poll(() => texts(page, ".details .message .reply")).toEqual(["⇢ ana ", "↪ ana "]);
    expect(await page.locator(".details .message .reply.inferred").count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, "report-conversations.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("draws the conversations as rows under the timeline, zoomed with it, a click on a row selecting its segment", async () => {
    const out = join(dir, "lanes.html");
    const report = buildReport({
      segments: LINKED_SEGMENTS,
      messages: LINKED_MESSAGES,
      settle: 10 * 60_000,
      now: LINKED_T0 + 86_400_000,
      generatedAt: LINKED_T0,
    });
    writeFileSync(out, renderReportHtml(report, await loadReportAssets()));
    const { page, errors } = await openReport(browser, out);
    const rows = page.locator(".lanes-canvas");
    // The two conversations, the join in neither, and bo's thread: a row each, by when they start.
    await expect
      .poll(() => rows.getAttribute("aria-label"))
      .toBe(
        "rows: ana: “anyone know how to mount an ntfs disk?”; bo: “lunch, anyone?”; the channel, in no conversation; bo: “lunch, anyone?”",
      );
    expect(await page.locator(".lanes .toolbar .muted").textContent()).toMatch(
      /^1 thread and 2 conversations in view \(and a row of the channel's messages in neither\), a row each/,
    );
    // Rows are 20 pixels high: the first row is ana's conversation, resumed at minute 40.
    const box = await rows.boundingBox();
    await rows.click({ position: { x: (box?.width ?? 0) - 20, y: 10 } });
    await page.locator(".details h3", { hasText: /Segment #\d/ }).waitFor();
    expect(await page.locator(".details").textContent()).toContain("thanks cy, it mounts");
    // A segment picked in the table zooms the timeline to it: the rows follow, to what is in view.
    await page.locator(".segment-row").filter({ hasText: "00:58" }).first().click();
    await expect
      .poll(() => rows.getAttribute("aria-label"))
      .toBe("rows: ana: “anyone know how to mount an ntfs disk?”");
    await page.locator(".toolbar button", { hasText: "whole channel" }).click();
    await expect
      .poll(async () => (await rows.getAttribute("aria-label"))?.split("; ").length)
      .toBe(4);
    expect(errors).toEqual([]);
  });

  it("opens the segment a #segment= anchor names, and shows questions and the last week linking to segments", async () => {
    const asked = {
      id: "q1",
      question: `how to fix it ${INJECTION}`,
      status: "unanswered" as const,
      askedId: "h05",
      askedTs: MESSAGES.find((m) => m.id === "h05")?.ts ?? 0,
      answerIds: [],
    };
    const candidates = CANDIDATES.map((c) =>
      c.segmentId === "seg-h2" ? { ...c, questions: [asked] } : c,
    );
    const report = buildReport({
      segments: SEGMENTS,
      candidates,
      // Its messages name the channel: the page says the name where it would say the id.
      messages: ALL_MESSAGES.map((m) =>
        m.channel === "help" ? { ...m, channelName: "Help desk" } : m,
      ),
      settle: 3_600_000,
      now: NOW,
      generatedAt: NOW,
    });
    const out = join(dir, "anchors.html");
    writeFileSync(out, renderReportHtml(report, await loadReportAssets()));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`file://${out}#${segmentAnchor("help", "seg-h2")}`);
    await page.waitForSelector("html[data-ready]");

    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    // Not the first channel the page shows by itself (ops sorts first): the anchor's.
    expect(await texts(page, ".channel-name")).toEqual(["Help desk"]);
    expect(await texts(page, "#questions .question-text")).toEqual([`how to fix it ${INJECTION}`]);
    expect(await texts(page, "#questions .segment-link")).toEqual(["Help desk · segment"]);
    expect(await texts(page, "#digest .digest-topics .topic-name")).toContain("wifi driver");
    // A link of the last week's section leads to its segment, the fragment followed.
    await page.locator("#digest .segment-link").first().click();
    await expect.poll(() => page.evaluate("location.hash")).toMatch(/^#segment=/);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("the report in Chromium: recurring questions", () => {
  it("lists a recurring question with its count and answer, linking to its latest asking's segment", async () => {
    const at = (id: string) => MESSAGES.find((m) => m.id === id)?.ts ?? 0;
    const ask = (id: string, question: string, answer?: string) => ({
      id: `q-${id}`,
      question,
      status: answer === undefined ? ("unanswered" as const) : ("answered" as const),
      askedId: id,
      askedTs: at(id),
      ...(answer === undefined ? {} : { answer }),
      answerIds: answer === undefined ? [] : ["h02"],
    });
    const questions: Record<string, ReturnType<typeof ask>[]> = {
      "seg-h1": [ask("h01", "how do I reset the wifi driver?", `reload it ${INJECTION}`)],
      "seg-h2": [ask("h05", "how to reset the wifi driver")],
    };
    const report = buildReport({
      segments: SEGMENTS,
      candidates: CANDIDATES.map((c) =>
        questions[c.segmentId] === undefined ? c : { ...c, questions: questions[c.segmentId] },
      ),
      messages: ALL_MESSAGES,
      settle: 3_600_000,
      now: NOW,
      generatedAt: NOW,
    });
    const out = join(dir, "faq.html");
    writeFileSync(out, renderReportHtml(report, await loadReportAssets()));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`file://${out}`);
    await page.waitForSelector("html[data-ready]");

    expect(await texts(page, "#faq h2")).toEqual(["Recurring questions"]);
    expect(await texts(page, "#faq .faq-entry .question-text")).toEqual([
      "how to reset the wifi driver",
    ]);
    expect(await texts(page, "#faq .faq-count")).toEqual(["asked 2 times by 2 people"]);
    expect(await texts(page, "#faq .answer")).toEqual([`answer: reload it ${INJECTION}`]);
    expect(await texts(page, "#faq .segment-link")).toEqual(["help · latest asking"]);
    await page.locator("#faq .segment-link").click();
    await expect
      .poll(() => page.evaluate("location.hash"))
      .toBe(`#${segmentAnchor("help", "seg-h2")}`);
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "report-faq.png"), fullPage: false });
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("the report in Chromium: search", () => {
  it("finds what is typed, marks its words, and opens the segment of the hit chosen from the keyboard", async () => {
    const { page, errors } = await openedReport(
      "search",
      { segments: SEGMENTS, candidates: CANDIDATES, messages: ALL_MESSAGES },
      ["--settle", "1h", "--now", String(NOW)],
      NOW,
    );
    const box = page.getByRole("combobox", { name: "Search" });
    await box.focus();
    // Typed as a person types: the box waits for a pause, and the last word is taken as begun.
    await box.pressSequentially("wifi drops", { delay: 20 });
    // The search's own options: the health section's channel picker has options too.
    const hits = page.locator("#search").getByRole("option");
    // The message, and its conversation (whose words are its messages').
    await expect
      .poll(() => texts(page, ".search-hit .hit-kind"))
      .toEqual(["conversation", "message"]);
    expect(await box.getAttribute("aria-expanded")).toBe("true");
    expect(await hits.nth(1).locator("mark").allTextContents()).toEqual(["wifi", "drops"]);
    expect(await page.locator("#search-status").textContent()).toMatch(/^2 hits: /);

    await box.fill("");
    await box.pressSequentially("wifi driver");
    await expect.poll(() => hits.count()).toBeGreaterThan(3);
    // What was learned leads: the topic, then the conversations that talked about it.
    expect(await hits.first().locator(".hit-kind").textContent()).toBe("topic");
    expect(await hits.first().locator("mark").allTextContents()).toEqual([
      "wifi",
      "driver",
      "driver",
    ]);
    const message = await texts(page, ".search-hit .hit-snippet");
    const row = message.indexOf("check the logs first, the wifi driver usually says what is wrong");
    expect(row).toBeGreaterThan(0);
    for (let i = 0; i <= row; i++) await box.press("ArrowDown");
    expect(await box.getAttribute("aria-activedescendant")).toBe(`search-hit-${row}`);
    expect(await hits.nth(row).getAttribute("aria-selected")).toBe("true");
    expect(await hits.nth(row).locator(".hit-where").textContent()).toBe(
      "help · 2025-01-06 12:01:00 · segment #2 · bo",
    );
    await box.press("Enter");

    // Its segment, as its anchor would open it, the message shown among the segment's.
    await page.locator(".details h3", { hasText: "Segment #2" }).waitFor();
    expect(await page.locator(".channel-name").textContent()).toBe("help");
    expect(await page.locator(".segment-row.selected").getAttribute("data-segment")).toBe("1");
    expect(await page.evaluate("location.hash")).toBe(`#${segmentAnchor("help", "seg-h2")}`);
    await page.locator('.details .message.flash[data-index="1"]').waitFor();
    expect(await hits.first().isHidden()).toBe(true);
    expect(await box.getAttribute("aria-expanded")).toBe("false");

    // Chat's markup comes back as text; Escape closes the list, then empties the box.
    await box.fill("deploy");
    await expect
      .poll(() => texts(page, ".search-hit .hit-snippet"))
      .toContain(`deploy notes ${INJECTION}`);
    await page.screenshot({ path: join(ARTIFACTS, "report-search.png") });
    await box.press("Escape");
    expect(await hits.first().isHidden()).toBe(true);
    await box.press("Escape");
    expect(await box.inputValue()).toBe("");
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("img, b, i, em, script[src]").count()).toBe(0);

    // A topic's hit, clicked, shows its channel with the segments that support it.
    await page.locator("h1").click();
    await page.keyboard.press("/");
    await page.keyboard.type("grub boot");
    await page
      .getByRole("option", { name: /^topic/ })
      .first()
      .click();
    expect(await page.locator(".filter-bar").textContent()).toMatch(
      /^1 of 4 segments support grub bootloader/,
    );
    expect(errors).toEqual([]);
  });
});
