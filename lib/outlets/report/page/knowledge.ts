/**
 * The report's questions and digest: the questions of the extracted segments (unanswered oldest
 * first, answered with their answers), the recurring ones (asked by the most people first) and
 * what the data's last seven days brought (new and recurring topics, activity). Each entry links to its segment (`#segment=…`, which the page
 * follows); chat text goes in as text nodes only.
 */
import { channelLabel, permalinkPlatform } from "../../../base/identity/index.js";
import type { Digest, DigestEvidence, DigestQuestion } from "../../digest/index.js";
import { segmentAnchor } from "../anchors.js";
import type { ReportData, ReportKnowledge } from "../data.js";
import { count, counted, el, span, time } from "./dom.js";

/** Questions per list shown before "all". */
const QUESTIONS = 10;

const segmentLink = (where: { channel: string; segmentId: string }, label: string) =>
  el(
    "a",
    { href: `#${segmentAnchor(where.channel, where.segmentId)}`, class: "segment-link" },
    label,
  );

/**
 * " · open in Slack" (Discord, Telegram) to the entry's message on its platform; nothing for any
 * other string, so that only a link of a shape the report makes (ids only) becomes an `href`.
 */
const platformLink = (permalink: string | undefined): (Node | string)[] => {
  const platform = permalinkPlatform(permalink);
  return permalink === undefined || platform === undefined
    ? []
    : [
        " · ",
        el(
          "a",
          { href: permalink, class: "platform-link", target: "_blank", rel: "noopener noreferrer" },
          `open in ${platform}`,
        ),
      ];
};

export function renderQuestions(container: HTMLElement, data: ReportData): void {
  const questions = data.knowledge?.questions;
  const heading = el("h2", {}, "Questions");
  const shown = (status: "unanswered" | "unclear" | "answered") =>
    questions === undefined ? 0 : questions[status].length + questions.omitted[status];
  if (questions === undefined || shown("unanswered") + shown("unclear") + shown("answered") === 0) {
    container.replaceChildren(
      heading,
      el(
        "p",
        { class: "muted" },
        "No questions found in these conversations. (Conversations extracted by an older version, or with run --candidates, were not searched for questions: npm start -- reextract searches them.)",
      ),
    );
    return;
  }
  // A channel as people know it (`general`), not its id (`C0GENERAL`), where its messages name it.
  const names = new Map(data.channels.map((c) => [c.name, c.displayName ?? c.name]));
  const nameOf = (channel: string) => names.get(channel) ?? channel;
  container.replaceChildren(
    heading,
    el("h3", {}, `Unanswered (${count(shown("unanswered"))}), oldest first`),
    questionList(questions.unanswered, questions.omitted.unanswered, nameOf),
    el("h3", {}, `Unclear (${count(shown("unclear"))}): whether an answer came is not clear`),
    questionList(questions.unclear, questions.omitted.unclear, nameOf),
    el("h3", {}, `Answered (${count(shown("answered"))})`),
    questionList(questions.answered, questions.omitted.answered, nameOf),
  );
}

function questionList(
  list: readonly DigestQuestion[],
  omitted: number,
  nameOf: (channel: string) => string,
): HTMLElement {
  if (list.length === 0) return el("p", { class: "muted" }, "None.");
  const items = el("ol", { class: "question-list" });
  const shown = (n: number) =>
    items.replaceChildren(...list.slice(0, n).map((q) => questionItem(q, nameOf)));
  shown(QUESTIONS);
  const box = el("div", {}, items);
  if (list.length > QUESTIONS) {
    const more = el("button", { type: "button", class: "link more" }, `all ${count(list.length)}`);
    more.addEventListener("click", () => {
      shown(list.length);
      more.remove();
    });
    box.appendChild(more);
  }
  if (omitted > 0) box.appendChild(el("p", { class: "muted" }, `…and ${count(omitted)} more.`));
  return box;
}

function questionItem(q: DigestQuestion, nameOf: (channel: string) => string): HTMLElement {
  return el(
    "li",
    { class: "question" },
    el("span", { class: "when muted" }, time(q.askedTs)),
    " ",
    el("span", { class: "question-text" }, q.question),
    " ",
    segmentLink(q, `${nameOf(q.channel)} · segment`),
    ...platformLink(q.permalink),
    // Its status (and answer) are a person's, not the model's guess.
    q.corrected === true && el("span", { class: "corrected muted" }, " corrected by a person"),
    q.answer !== undefined && el("div", { class: "answer" }, `answer: ${q.answer}`),
  );
}

/** `2025-01-06 08:03` (UTC). */
const minute = (ms: number): string => time(ms).slice(0, 16);

/**
 * The recurring questions: each in its clearest wording, how often and when it was asked, its
 * answer, and links to the segment (and platform message) of its latest asking.
 */
export function renderFaq(container: HTMLElement, data: ReportData): void {
  const faq = data.knowledge?.faq;
  const heading = el("h2", {}, "Recurring questions");
  if (faq === undefined || faq.entries.length === 0) {
    container.replaceChildren(
      heading,
      el("p", { class: "muted" }, "No question was asked twice (in other words) yet."),
    );
    return;
  }
  const names = new Map(data.channels.map((c) => [c.name, c.displayName ?? c.name]));
  const nameOf = (channel: string) => names.get(channel) ?? channel;
  container.replaceChildren(
    heading,
    el(
      "p",
      { class: "muted lead" },
      "Questions people ask again and again, in other words grouped as one, asked by the most people first across the channels (as npm start -- faq lists them per channel).",
    ),
    el("ol", { class: "faq-list" }, ...faq.entries.map((f) => faqItem(f, nameOf))),
    ...(faq.omitted > 0
      ? [el("p", { class: "muted" }, `…and ${counted(faq.omitted, "more recurring question")}.`)]
      : []),
  );
}

function faqItem(
  f: NonNullable<Digest["faq"]>[number],
  nameOf: (channel: string) => string,
): HTMLElement {
  return el(
    "li",
    { class: "faq-entry" },
    el("span", { class: "question-text" }, f.question),
    el(
      "span",
      { class: "faq-count" },
      `asked ${count(f.count)} times by ${count(f.people)} people`,
    ),
    el(
      "span",
      { class: "muted" },
      `, first ${minute(f.firstAsked)}, last ${minute(f.lastAsked)}; ${count(f.answered)} answered · `,
    ),
    segmentLink(f, `${nameOf(f.channel)} · latest asking`),
    ...platformLink(f.permalink),
    f.answer !== undefined &&
      el(
        "div",
        { class: "answer" },
        `answer${f.answer.corrected ? " (corrected)" : ""}: ${f.answer.text}`,
      ),
  );
}

export function renderDigest(container: HTMLElement, data: ReportData): void {
  const digest: ReportKnowledge["digest"] = data.knowledge?.digest ?? null;
  const heading = el("h2", {}, "The last seven days");
  if (digest === null) {
    container.replaceChildren(heading, el("p", { class: "muted" }, "No data."));
    return;
  }
  // `general (C0GENERAL)`, as the digest's other forms name a channel.
  const channel = (id: string) => channelLabel(id, digest.names?.[id]);
  const activity = el(
    "ul",
    { class: "digest-activity" },
    ...digest.activity.map((a) =>
      el(
        "li",
        {},
        el("strong", {}, channel(a.channel)),
        `: ${counted(a.messages, "message")}, ${counted(a.conversations, "conversation")}, ${count(a.activePeople)} active ${a.activePeople === 1 ? "person" : "people"}`,
      ),
    ),
  );
  const topics = (kind: "new" | "recurring") => {
    const of = digest.topics.filter((t) => t.kind === kind);
    if (of.length === 0) return el("p", { class: "muted" }, "None.");
    return el(
      "ul",
      { class: "digest-topics" },
      ...of.map((t) =>
        el(
          "li",
          {},
          el("span", { class: "topic-name" }, t.topic),
          t.aliases.length > 0 &&
            el("span", { class: "aliases" }, ` (also: ${t.aliases.join(", ")})`),
          el(
            "span",
            { class: "muted" },
            ` in ${channel(t.channel)}: ${counted(t.segments, "conversation")}${t.kind === "recurring" ? `, ${count(t.earlierSegments)} before` : ""} · `,
          ),
          ...evidenceLinks(t.evidence),
          ...platformLink(t.permalink),
        ),
      ),
    );
  };
  container.replaceChildren(
    heading,
    el(
      "p",
      { class: "muted lead" },
      `${span(digest.since, digest.until - 1)} (UTC): the digest of the data's last week, as npm start -- digest writes it.`,
    ),
    activity,
    el("h3", {}, "New topics"),
    topics("new"),
    el("h3", {}, "Recurring topics"),
    topics("recurring"),
    ...(digest.omitted?.topics
      ? [el("p", { class: "muted" }, `…and ${counted(digest.omitted.topics, "more topic")}.`)]
      : []),
  );
}

function evidenceLinks(evidence: readonly DigestEvidence[]): (Node | string)[] {
  return evidence.flatMap((e, i) => [
    i > 0 ? ", " : "",
    segmentLink(e, time(e.firstTs).slice(0, 16)),
  ]);
}
