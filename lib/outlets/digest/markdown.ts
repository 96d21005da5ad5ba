import { faqAsked, faqEvidence } from "./faq.js";
import { HEALTH_HEADING, healthFigures } from "./health.js";
import {
  counted,
  digestChannel,
  markdownText,
  minute,
  permalinkLabel,
  safeHref,
  safePermalink,
  thousands,
  utcDate,
} from "./text.js";
import type { Digest, DigestEvidence, DigestFaq, DigestQuestion, DigestTopic } from "./types.js";

export interface RenderOptions {
  /** Where an entry's segment is shown (the run report's anchor: `reportSegmentHref`). */
  reportHref?: (evidence: DigestEvidence) => string;
}

/**
 * The digest as Markdown: activity, new and recurring topics with links to their evidence,
 * unanswered questions oldest first, answered ones with their answers; each entry with its
 * platform link where it has one. Every chat string is {@link markdownText}: no markup, link or
 * mention comes of it.
 */
export function digestMarkdown(digest: Digest, options: RenderOptions = {}): string {
  const link = (e: DigestEvidence, label: string): string => {
    const href = options.reportHref === undefined ? undefined : safeHref(options.reportHref(e));
    return href === undefined
      ? `${label} (segment ${markdownText(e.segmentId)})`
      : `[${label}](${href})`;
  };
  const channel = (id: string) => markdownText(digestChannel(digest, id));
  const lines: string[] = [
    `# Digest: ${digest.channels.map(channel).join(", ")}`,
    "",
    `${periodText(digest)} (UTC), generated ${Number.isFinite(Date.parse(digest.generatedAt)) ? minute(Date.parse(digest.generatedAt)) : markdownText(digest.generatedAt)}.`,
    "",
    "## Activity",
    "",
    "| Channel | Messages | Conversations | Active people | Busiest day |",
    "| --- | ---: | ---: | ---: | --- |",
    ...digest.activity.map((a) => {
      const busiest = a.days.reduce((m, d) => (d.messages > m.messages ? d : m), a.days[0]);
      return `| ${channel(a.channel)} | ${thousands(a.messages)} | ${thousands(a.conversations)} | ${thousands(a.activePeople)} | ${busiest !== undefined && busiest.messages > 0 ? `${busiest.day} (${thousands(busiest.messages)})` : "–"} |`;
    }),
  ];
  const topics = (kind: DigestTopic["kind"], heading: string) => {
    const of = digest.topics.filter((t) => t.kind === kind);
    lines.push("", `## ${heading}`, "");
    if (of.length === 0) lines.push("None.");
    for (const t of of) lines.push(...topicLines(t, link, channel));
  };
  topics("new", "New topics");
  topics("recurring", "Recurring topics");
  if (digest.omitted?.topics)
    lines.push("", `…and ${counted(digest.omitted.topics, "more topic")}.`);
  const questions = (list: DigestQuestion[], heading: string, left: number | undefined) => {
    lines.push("", `## ${heading}`, "");
    if (list.length === 0) lines.push("None.");
    for (const q of list) lines.push(...questionLines(q, link, channel));
    if (left) lines.push("", `…and ${counted(left, "more question")}.`);
  };
  if (digest.faq !== undefined) {
    lines.push("", `## ${FAQ_HEADING}`, "");
    for (const f of digest.faq) lines.push(...faqLines(f, link, channel));
  }
  if (digest.omitted?.faq) {
    lines.push("", `…and ${counted(digest.omitted.faq, "more recurring question")}.`);
  }
  if (digest.health !== undefined) {
    const named = digest.health.some((h) => h.answerers !== undefined);
    lines.push(
      "",
      `## ${HEALTH_HEADING}`,
      "",
      `| Channel | Questions | Answered | First answer | Unanswered |${named ? " Top answerers |" : ""}`,
      `| --- | ---: | ---: | --- | ---: |${named ? " --- |" : ""}`,
      ...digest.health.map((h) => {
        const f = healthFigures(h, markdownText);
        const who = named ? ` ${f.answerers ?? "–"} |` : "";
        return `| ${channel(h.channel)} | ${thousands(h.questions)} | ${f.answered} | ${f.firstAnswer} | ${thousands(h.unanswered)} |${who}`;
      }),
    );
  }
  for (const status of QUESTION_ORDER) {
    questions(digest[status], questionHeading(digest, status), digest.omitted?.[status]);
  }
  return `${lines.join("\n")}\n`;
}

function topicLines(
  t: DigestTopic,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string[] {
  const also = t.aliases.length === 0 ? "" : ` (also: ${t.aliases.map(markdownText).join(", ")})`;
  const earlier =
    t.kind === "recurring"
      ? `, ${counted(t.earlierSegments, "earlier conversation")} since ${utcDate(t.firstSeen)}`
      : "";
  const evidence = t.evidence.map((e) => link(e, minute(e.firstTs)));
  return [
    `- **${markdownText(t.topic)}**${also} in ${channel(t.channel)}: ${counted(t.segments, "conversation")}${earlier}${permalinkOf(t)}`,
    `  - evidence: ${evidence.join(", ")}`,
  ];
}

function questionLines(
  q: DigestQuestion,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string[] {
  const asked = link(evidenceOf(q), minute(q.askedTs));
  const lines = [
    `- ${markdownText(q.question)} (asked ${asked} in ${channel(q.channel)})${questionCorrected(q)}${permalinkOf(q)}`,
  ];
  if (q.answer !== undefined) lines.push(`  - answer: ${markdownText(q.answer)}`);
  return lines;
}

function faqLines(
  f: DigestFaq,
  link: (e: DigestEvidence, label: string) => string,
  channel: (id: string) => string,
): string[] {
  const lines = [
    `- **${markdownText(f.question)}** in ${channel(f.channel)}: ${faqAsked(f)}; latest ${link(faqEvidence(f), minute(f.askedTs))}${permalinkOf(f)}`,
  ];
  if (f.answer !== undefined)
    lines.push(`  - answer${faqCorrected(f)}: ${markdownText(f.answer.text)}`);
  return lines;
}

/** The section of recurring questions, in every form: the digest lists it only when it has some. */
export const FAQ_HEADING = "Recurring questions";

/** ` (corrected by a person)` after a question whose status or answer a person set; else "". */
export const questionCorrected = (q: DigestQuestion): string =>
  q.corrected ? " (corrected by a person)" : "";

/** ` (corrected)` after "answer" when a person set it; else "". */
export const faqCorrected = (f: DigestFaq): string => (f.answer?.corrected ? " (corrected)" : "");

/** ` · [open in Slack](…)`: an entry's platform link, where it has a safe one; else "". */
function permalinkOf(entry: { permalink?: string }): string {
  const url = safePermalink(entry.permalink);
  return url === undefined ? "" : ` · [${permalinkLabel(url)}](${url})`;
}

/** The order every form lists questions in: what still wants an answer first. */
export const QUESTION_ORDER = ["unanswered", "unclear", "answered"] as const;

const QUESTION_HEADINGS: Record<DigestQuestion["status"], (n: string) => string> = {
  unanswered: (n) => `Unanswered (${n}), oldest first`,
  unclear: (n) => `Unclear (${n}): whether an answer came is not clear`,
  answered: (n) => `Answered (${n})`,
};

/**
 * `Unanswered (21), oldest first`: the words and count (listed and omitted) the report uses for
 * the same questions, in every digest form.
 */
export function questionHeading(digest: Digest, status: DigestQuestion["status"]): string {
  return QUESTION_HEADINGS[status](
    thousands(digest[status].length + (digest.omitted?.[status] ?? 0)),
  );
}

/** A question's place as an evidence link: its segment, its asking message to its last answer. */
export function evidenceOf(q: DigestQuestion): DigestEvidence {
  const last = q.answerIds.at(-1) ?? q.askedId;
  return {
    channel: q.channel,
    segmentId: q.segmentId,
    messageIds: [q.askedId, last],
    ...(q.thread === undefined ? {} : { thread: q.thread }),
    firstTs: q.askedTs,
    lastTs: q.askedTs,
  };
}

/** `2026-01-01 to 2026-01-07` (the last day the half-open period touches). */
export function periodText(digest: Pick<Digest, "since" | "until">): string {
  const first = utcDate(digest.since);
  const last = utcDate(digest.until - 1);
  return first === last
    ? `${minute(digest.since)} to ${minute(digest.until)}`
    : `${first} to ${last}`;
}

/** The digest as its JSON contract (`Digest` v1), one line. */
export function digestJson(digest: Digest): string {
  return `${JSON.stringify(digest)}\n`;
}
