import { faqAsked, faqEvidence } from "./faq.js";
import { HEALTH_HEADING, healthFigures } from "./health.js";
import {
  evidenceOf,
  FAQ_HEADING,
  faqCorrected,
  periodText,
  QUESTION_ORDER,
  questionCorrected,
  questionHeading,
  type RenderOptions,
} from "./markdown.js";
import {
  counted,
  digestChannel,
  htmlText,
  minute,
  permalinkLabel,
  safeHref,
  safePermalink,
  thousands,
  utcDate,
} from "./text.js";
import type {
  Digest,
  DigestActivity,
  DigestEvidence,
  DigestFaq,
  DigestQuestion,
  DigestTopic,
} from "./types.js";

/**
 * The digest as one standalone HTML page: no script, nothing fetched (its Content-Security-Policy
 * allows its inline style only), a small inline SVG bar chart of each channel's messages per day.
 * Every chat string is {@link htmlText}-escaped; an entry's platform link is an `<a href>` only
 * when it is an https link to Slack, Discord or Telegram of ids ({@link safePermalink}).
 */
export function digestHtml(digest: Digest, options: RenderOptions = {}): string {
  // As in Markdown: a time links to its segment; the segment's id is said only where no link is.
  const link = (e: DigestEvidence, label: string): string => {
    const href = options.reportHref === undefined ? undefined : safeHref(options.reportHref(e));
    const segment = `segment ${htmlText(e.segmentId)}`;
    return href === undefined
      ? `${label} <span class="muted">(${segment})</span>`
      : `<a href="${htmlText(href)}" title="${segment}">${label}</a>`;
  };
  const channel = (id: string) => htmlText(digestChannel(digest, id));
  const title = `Digest: ${digest.channels.map(channel).join(", ")}`;
  const topics = (kind: DigestTopic["kind"], heading: string) => {
    const of = digest.topics.filter((t) => t.kind === kind);
    return `<h2>${heading}</h2>\n${of.length === 0 ? `<p class="muted">None.</p>` : `<ul class="topics">\n${of.map((t) => topicItem(t, link, channel)).join("\n")}\n</ul>`}`;
  };
  const questions = (list: DigestQuestion[], heading: string, left = 0) =>
    `<h2>${heading}</h2>\n${list.length === 0 ? `<p class="muted">None.</p>` : `<ul class="questions">\n${list.map((q) => questionItem(q, link, channel)).join("\n")}\n</ul>`}${more(left, "question")}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${title}</h1><p class="muted">${periodText(digest)} (UTC), generated ${generatedText(digest.generatedAt)}</p></header>
<h2>Activity</h2>
${digest.activity.map((a) => activityBlock(a, channel)).join("\n")}
${topics("new", "New topics")}
${topics("recurring", "Recurring topics")}${more(digest.omitted?.topics ?? 0, "topic")}
${digest.faq === undefined ? "" : `<h2>${FAQ_HEADING}</h2>\n<ul class="faq">\n${digest.faq.map((f) => faqItem(f, link, channel)).join("\n")}\n</ul>`}${more(digest.omitted?.faq ?? 0, "recurring question")}
${healthTable(digest, channel)}
${QUESTION_ORDER.map((status) => questions(digest[status], htmlText(questionHeading(digest, status)), digest.omitted?.[status])).join("\n")}
</body>
</html>
`;
}

/** The health table: one row per channel with a question asked in the period; none: nothing. */
function healthTable(digest: Digest, channel: (id: string) => string): string {
  if (digest.health === undefined) return "";
  const named = digest.health.some((h) => h.answerers !== undefined);
  const rows = digest.health.map((h) => {
    const f = healthFigures(h, htmlText);
    const who = named ? `<td>${f.answerers ?? "–"}</td>` : "";
    return `<tr><td class="channel">${channel(h.channel)}</td><td class="n">${thousands(h.questions)}</td><td class="n">${f.answered}</td><td>${f.firstAnswer}</td><td class="n">${thousands(h.unanswered)}</td>${who}</tr>`;
  });
  const head = `<tr><th>Channel</th><th>Questions</th><th>Answered</th><th>First answer</th><th>Unanswered</th>${named ? "<th>Top answerers</th>" : ""}</tr>`;
  return `<h2>${HEALTH_HEADING}</h2>\n<table class="health">\n${head}\n${rows.join("\n")}\n</table>`;
}

/** When it was made, as the other times (a time that does not parse is shown escaped). */
const generatedText = (iso: string): string => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? minute(ms) : htmlText(iso);
};

const more = (left: number, what: string): string =>
  left > 0 ? `\n<p class="muted">…and ${counted(left, `more ${what}`)}.</p>` : "";

function topicItem(
  t: DigestTopic,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string {
  const also =
    t.aliases.length === 0
      ? ""
      : ` <span class="muted">also: ${t.aliases.map(htmlText).join(", ")}</span>`;
  const earlier =
    t.kind === "recurring"
      ? `, ${counted(t.earlierSegments, "earlier conversation")} since ${utcDate(t.firstSeen)}`
      : "";
  const evidence = t.evidence.map((e) => link(e, minute(e.firstTs))).join(", ");
  return `<li><strong>${htmlText(t.topic)}</strong>${also} in <span class="channel">${channel(t.channel)}</span>: ${counted(t.segments, "conversation")}${earlier}${permalinkOf(t)}<div class="evidence">evidence: ${evidence}</div></li>`;
}

function questionItem(
  q: DigestQuestion,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string {
  const asked = link(evidenceOf(q), minute(q.askedTs));
  const answer =
    q.answer === undefined ? "" : `<div class="answer">answer: ${htmlText(q.answer)}</div>`;
  return `<li>${asked} in <span class="channel">${channel(q.channel)}</span>: ${htmlText(q.question)}${questionCorrected(q)}${permalinkOf(q)}${answer}</li>`;
}

function faqItem(
  f: DigestFaq,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string {
  const answer =
    f.answer === undefined
      ? ""
      : `<div class="answer">answer${faqCorrected(f)}: ${htmlText(f.answer.text)}</div>`;
  return `<li><strong>${htmlText(f.question)}</strong> in <span class="channel">${channel(f.channel)}</span>: ${faqAsked(f)}; latest ${link(faqEvidence(f), minute(f.askedTs))}${permalinkOf(f)}${answer}</li>`;
}

/** ` · <a href="…">open in Slack</a>`: an entry's platform link, where it has a safe one. */
function permalinkOf(entry: { permalink?: string }): string {
  const url = safePermalink(entry.permalink);
  return url === undefined ? "" : ` · <a href="${htmlText(url)}">${permalinkLabel(url)}</a>`;
}

/** Bar geometry of the chart: one bar per UTC day, the chart some 420px wide at most. */
const CHART_WIDTH = 420;
const GAP = 2;
const HEIGHT = 60;

function activityBlock(a: DigestActivity, channel: (id: string) => string): string {
  const most = Math.max(1, ...a.days.map((d) => d.messages));
  const bar = Math.max(2, Math.min(30, Math.floor(CHART_WIDTH / Math.max(1, a.days.length)) - GAP));
  const width = Math.max(a.days.length * (bar + GAP), 150);
  const bars = a.days
    .map((d, i) => {
      const h = Math.round((d.messages / most) * HEIGHT);
      return `<rect x="${i * (bar + GAP)}" y="${HEIGHT - h}" width="${bar}" height="${Math.max(h, d.messages > 0 ? 1 : 0)}"><title>${d.day}: ${counted(d.messages, "message")}</title></rect>`;
    })
    .join("");
  const first = a.days[0]?.day ?? "";
  const last = a.days.at(-1)?.day ?? "";
  return `<section class="activity"><h3>${channel(a.channel)}</h3>
<p>${counted(a.messages, "message")}, ${counted(a.conversations, "conversation")}, ${thousands(a.activePeople)} active ${a.activePeople === 1 ? "person" : "people"}</p>
<svg class="chart" role="img" aria-label="messages per day" width="${width}" height="${HEIGHT + 16}" viewBox="0 0 ${width} ${HEIGHT + 16}">${bars}<text x="0" y="${HEIGHT + 13}">${first}</text><text x="${width}" y="${HEIGHT + 13}" text-anchor="end">${first === last ? "" : last}</text></svg></section>`;
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:1.8rem;border-bottom:1px solid #d0d7de}
h3{font-size:1rem;margin:.6rem 0 .2rem}.muted{color:#656d76}.channel{color:#0550ae}
ul{padding-left:1.2rem}li{margin:.35rem 0}.evidence,.answer{font-size:.9em;color:#424a53}
.activity{display:inline-block;vertical-align:top;margin:0 2rem 1rem 0}
.chart rect{fill:#54aeff}.chart text{font-size:10px;fill:#656d76}a{color:#0969da}
.health{border-collapse:collapse}.health th,.health td{padding:.2rem .6rem;border-bottom:1px solid #d0d7de;text-align:left}
.health .n{text-align:right;font-variant-numeric:tabular-nums}`;
