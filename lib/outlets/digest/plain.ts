import { faqAsked } from "./faq.js";
import { HEALTH_HEADING, healthFigures } from "./health.js";
import {
  FAQ_HEADING,
  faqCorrected,
  periodText,
  QUESTION_ORDER,
  questionCorrected,
  questionHeading,
} from "./markdown.js";
import {
  counted,
  digestChannel,
  minute,
  plainText,
  safePermalink,
  thousands,
  utcDate,
} from "./text.js";
import type { Digest, DigestEvidence, DigestFaq, DigestQuestion, DigestTopic } from "./types.js";

/**
 * The digest as plain text, for a terminal: the Markdown form's sections without its markup or
 * escapes (`std::process::Command` reads as written). Every chat string is {@link plainText}:
 * on one line, without the control characters a terminal could act on. An entry's platform link
 * ends its first line in angle brackets (`<https://slack.com/archives/…>`).
 */
export function digestText(digest: Digest): string {
  const generated = Date.parse(digest.generatedAt);
  const channel = (id: string) => plainText(digestChannel(digest, id));
  const lines: string[] = [
    `Digest: ${digest.channels.map(channel).join(", ")}`,
    `${periodText(digest)} (UTC), generated ${Number.isFinite(generated) ? minute(generated) : plainText(digest.generatedAt)}`,
    "",
    "Activity",
    ...digest.activity.map((a) => {
      const busiest = a.days.reduce((m, d) => (d.messages > m.messages ? d : m), a.days[0]);
      const peak =
        busiest !== undefined && busiest.messages > 0
          ? `; busiest ${busiest.day} (${thousands(busiest.messages)})`
          : "";
      return `  ${channel(a.channel)}: ${counted(a.messages, "message")}, ${counted(a.conversations, "conversation")}, ${thousands(a.activePeople)} active ${a.activePeople === 1 ? "person" : "people"}${peak}`;
    }),
  ];
  const section = (heading: string, entries: string[][], left: number | undefined) => {
    lines.push("", heading);
    if (entries.length === 0) lines.push("  None.");
    for (const entry of entries) lines.push(...entry);
    if (left) lines.push(`  …and ${thousands(left)} more.`);
  };
  const of = (kind: DigestTopic["kind"]) => digest.topics.filter((t) => t.kind === kind);
  const topic = (t: DigestTopic) => topicLines(t, channel);
  section("New topics", of("new").map(topic), undefined);
  section("Recurring topics", of("recurring").map(topic), digest.omitted?.topics);
  if (digest.faq !== undefined) {
    section(
      FAQ_HEADING,
      digest.faq.map((f) => faqLines(f, channel)),
      digest.omitted?.faq,
    );
  }
  if (digest.health !== undefined) {
    section(
      HEALTH_HEADING,
      digest.health.map((h) => {
        const f = healthFigures(h, plainText);
        const who = f.answerers === undefined ? "" : `; top answerers: ${f.answerers}`;
        return [
          `  - ${channel(h.channel)}: ${counted(h.questions, "question")}, ${f.answered} answered, first answer ${f.firstAnswer}, ${thousands(h.unanswered)} unanswered${who}`,
        ];
      }),
      undefined,
    );
  }
  for (const status of QUESTION_ORDER) {
    section(
      questionHeading(digest, status),
      digest[status].map((q) => questionLines(q, channel)),
      digest.omitted?.[status],
    );
  }
  return `${lines.join("\n")}\n`;
}

const at = (e: DigestEvidence): string =>
  `${minute(e.firstTs)} (segment ${plainText(e.segmentId)})`;

function topicLines(t: DigestTopic, channel: (id: string) => string): string[] {
  const also = t.aliases.length === 0 ? "" : ` (also: ${t.aliases.map(plainText).join(", ")})`;
  const earlier =
    t.kind === "recurring"
      ? `, ${counted(t.earlierSegments, "earlier conversation")} since ${utcDate(t.firstSeen)}`
      : "";
  return [
    `  - ${plainText(t.topic)}${also} in ${channel(t.channel)}: ${counted(t.segments, "conversation")}${earlier}${permalinkOf(t)}`,
    `    evidence: ${t.evidence.map(at).join(", ")}`,
  ];
}

function questionLines(q: DigestQuestion, channel: (id: string) => string): string[] {
  const lines = [
    `  - ${plainText(q.question)} (asked ${minute(q.askedTs)} in ${channel(q.channel)}, segment ${plainText(q.segmentId)})${questionCorrected(q)}${permalinkOf(q)}`,
  ];
  if (q.answer !== undefined) lines.push(`    answer: ${plainText(q.answer)}`);
  return lines;
}

function faqLines(f: DigestFaq, channel: (id: string) => string): string[] {
  const lines = [
    `  - ${plainText(f.question)} in ${channel(f.channel)}: ${faqAsked(f)}; latest ${minute(f.askedTs)} (segment ${plainText(f.segmentId)})${permalinkOf(f)}`,
  ];
  if (f.answer !== undefined)
    lines.push(`    answer${faqCorrected(f)}: ${plainText(f.answer.text)}`);
  return lines;
}

/** ` <https://slack.com/archives/…>`: an entry's platform link, where it has a safe one. */
function permalinkOf(entry: { permalink?: string }): string {
  const url = safePermalink(entry.permalink);
  return url === undefined ? "" : ` <${url}>`;
}
