import { type FaqQuestion, groupQuestions, questionMatcher, sameQuestion } from "convoseg/faq";
import { embeddingMatcher } from "convoseg/topics";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const q = (question: string, askedTs: number, extra: Partial<FaqQuestion> = {}): FaqQuestion => ({
  question,
  askedId: `m${askedTs}`,
  askedTs,
  answerIds: [],
  ...extra,
});

describe("groupQuestions", () => {
  it("groups rewordings into entries with their clearest wording, counts, times and answer", () => {
    const entries = groupQuestions([
      q("how do I install nvidia drivers on ubuntu?", 10),
      q("How do I install NVIDIA drivers", 20, {
        answer: "ubuntu-drivers install",
        answerIds: ["a1"],
      }),
      q("how to install the nvidia driver", 30, {
        answer: "use additional drivers",
        answerIds: ["a2", "a3", "a3"],
      }),
      q("how do I uninstall nvidia drivers", 40),
      q("how do I uninstall nvidia drivers", 50),
      q("what is a kernel", 60),
    ]);
    expect(entries).toHaveLength(2);
    const [install, uninstall] = entries;
    expect(install).toEqual({
      question: "How do I install NVIDIA drivers",
      count: 3,
      people: 3,
      answered: 2,
      firstAsked: 10,
      lastAsked: 30,
      answer: {
        text: "use additional drivers",
        askedId: "m30",
        answerIds: ["a2", "a3", "a3"],
        corrected: false,
      },
      wordings: ["how do I install nvidia drivers on ubuntu?", "how to install the nvidia driver"],
      askedIds: ["m30", "m20", "m10"],
      moreAsked: 0,
    });
    expect(uninstall.question).toBe("how do I uninstall nvidia drivers");
    expect(uninstall.count).toBe(2);
    expect(uninstall.answer).toBeUndefined();
    expect(uninstall.wordings).toEqual([]);
  });

  it("prefers a corrected answer, then the latest of equally supported ones", () => {
    const [entry] = groupQuestions([
      q("how do I reset my password", 1, { answer: "passwd", answerIds: ["a1", "a2"] }),
      q("how to reset the password", 2, {
        answer: "recovery mode",
        answerIds: ["a3"],
        corrected: true,
      }),
    ]);
    expect(entry.answer).toEqual({
      text: "recovery mode",
      askedId: "m2",
      answerIds: ["a3"],
      corrected: true,
    });
    const [latest] = groupQuestions([
      q("how do I reset my password", 1, { answer: "old", answerIds: ["a1"] }),
      q("how to reset the password", 2, { answer: "new", answerIds: ["a2"] }),
    ]);
    expect(latest.answer?.text).toBe("new");
  });

  it("prefers an answer that says something to a bare 'yes', however many messages back it", () => {
    const [entry] = groupQuestions([
      q("how do I reset my password", 1, { answer: "yes", answerIds: ["a1", "a2", "a3"] }),
      q("how to reset the password", 2, { answer: "ahh", answerIds: ["a4", "a5"] }),
      q("reset password?", 3, {
        answer: "boot into recovery mode and run passwd",
        answerIds: ["a6"],
      }),
    ]);
    expect(entry.answer?.text).toBe("boot into recovery mode and run passwd");
  });

  it("bounds the evidence, and keeps single questions when told", () => {
    const many = Array.from({ length: 5 }, (_, i) => q("how do I mount a usb drive", i));
    const [entry] = groupQuestions(many, { maxEvidence: 2 });
    expect(entry.askedIds).toEqual(["m4", "m3"]);
    expect(entry.moreAsked).toBe(3);
    expect(groupQuestions([q("what is a kernel", 1)])).toEqual([]);
    const [worded] = groupQuestions([q("usb drive mount?", 1), q("how do I mount a usb drive", 2)]);
    expect(worded.question).toBe("how do I mount a usb drive");
    expect(groupQuestions([q("what is a kernel", 1)], { minCount: 1 })).toHaveLength(1);
  });

  it("makes no entry of a question whose words ask nothing, however often it is said", () => {
    const pleas = [q("Can someone help me?", 1), q("can someone help me?", 2), q("anyone?", 3)];
    expect(groupQuestions(pleas)).toEqual([]);
    expect(groupQuestions(pleas, { minCount: 1 })).toEqual([]);
    const [entry] = groupQuestions([
      ...pleas,
      q("how do I mount a usb drive", 4),
      q("mount usb drive?", 5),
    ]);
    expect(entry.count).toBe(2);
  });

  it("makes no entry of a question that only says something is wrong, or asks of what was said before", () => {
    // The top entries of 30,000 lines of #ubuntu before this rule: follow-ups, not questions a
    // channel keeps asking.
    const followUps = [
      "does not work?",
      "didn't work?",
      "how fix?",
      "how can i fix it?",
      "what's the error?",
      "what is the error?",
      "any suggestions?",
      "Any suggestions?",
      "how do I install it?",
      "how did you install it",
    ];
    expect(groupQuestions(followUps.map((text, i) => q(text, i)))).toEqual([]);
    const [entry, ...rest] = groupQuestions([
      ...followUps.map((text, i) => q(text, i)),
      q("wifi does not work after suspend", 20),
      q("wireless not working after suspend", 21),
    ]);
    expect(rest).toEqual([]);
    expect([entry.question, entry.count]).toEqual(["wifi does not work after suspend", 2]);
  });

  it("counts people: one person asking again is no recurring question, and more people rank first", () => {
    const byAna = [
      q("how do I mount a usb drive", 1, { askedBy: "ana" }),
      q("how do I mount a usb drive???", 2, { askedBy: "ana" }),
      q("mount usb drive?", 3, { askedBy: "ana" }),
    ];
    expect(groupQuestions(byAna)).toEqual([]);
    const entries = groupQuestions([
      ...byAna,
      q("how do I reset my password", 4, { askedBy: "bo" }),
      q("how to reset the password", 5, { askedBy: "cy" }),
      q("reset password?", 6, { askedBy: "dee" }),
      q("mount a usb drive", 7, { askedBy: "bo" }),
    ]);
    expect(entries.map((e) => [e.question, e.count, e.people])).toEqual([
      ["how to reset the password", 3, 3],
      ["how do I mount a usb drive", 4, 2],
    ]);
    // An asking of no known author is a person of its own.
    expect(groupQuestions([q("reset password?", 1), q("reset password?", 2)])[0].people).toBe(2);
  });

  it("joins no two questions by the words of the channel's name", () => {
    const asked = [
      q("ubuntu install?", 1),
      q("how to install lisp in ubuntu", 2),
      q("Installing Ubuntu?", 3),
      q("how do I install lisp", 4),
    ];
    const wordings = (entries: ReturnType<typeof groupQuestions>) =>
      entries.map((e) => [e.question, ...e.wordings].sort());
    // In any channel "ubuntu install" and "install lisp in ubuntu" share two words of three.
    expect(wordings(groupQuestions(asked))).toEqual([
      [
        "Installing Ubuntu?",
        "how do I install lisp",
        "how to install lisp in ubuntu",
        "ubuntu install?",
      ],
    ]);
    // In #ubuntu every question is about ubuntu: installing it and installing lisp are two.
    expect(wordings(groupQuestions(asked, { channel: "#ubuntu" }))).toEqual([
      ["how do I install lisp", "how to install lisp in ubuntu"],
      ["Installing Ubuntu?", "ubuntu install?"],
    ]);
  });

  it("joins what another matcher links, such as embeddings", () => {
    const questions = [
      q("wifi drops every few minutes", 1),
      q("network connection keeps disconnecting", 2),
    ];
    expect(groupQuestions(questions)).toEqual([]);
    const vectors = new Map([
      ["wifi drops every few minutes", [1, 0.1]],
      ["network connection keeps disconnecting", [1, 0.12]],
    ]);
    const [entry] = groupQuestions(questions, {
      matchers: [questionMatcher(), embeddingMatcher(vectors, 0.95), () => [["unknown", "other"]]],
    });
    expect(entry.count).toBe(2);
  });

  it("is order-independent and puts every question in exactly one group", () => {
    const wordings = [
      "how do I install nvidia drivers",
      "how to install the nvidia driver",
      "how do I uninstall nvidia drivers",
      "how to remove nvidia drivers",
      "wifi not working after suspend",
      "wireless doesn't work after suspend",
      "how do I upgrade to 24.04",
      "how do I upgrade to 22.04",
      "what is a kernel",
    ];
    const question = fc.record({
      question: fc.constantFrom(...wordings),
      askedId: fc.constantFrom("m1", "m2", "m3", "m4"),
      askedTs: fc.integer({ min: 0, max: 5 }),
      answerIds: fc.array(fc.constantFrom("a1", "a2"), { maxLength: 2 }),
      answer: fc.option(fc.constantFrom("x", "y"), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc
          .array(question, { maxLength: 12 })
          .chain((qs) =>
            fc.tuple(
              fc.constant(qs),
              fc.shuffledSubarray(qs, { minLength: qs.length, maxLength: qs.length }),
            ),
          ),
        ([questions, shuffled]) => {
          const options = { minCount: 1 };
          const a = groupQuestions(questions, options);
          expect(groupQuestions(shuffled, options)).toEqual(a);
          expect(a.reduce((n, e) => n + e.count, 0)).toBe(questions.length);
          const seen = a.flatMap((e) => [e.question, ...e.wordings]);
          expect(new Set(seen).size).toBe(seen.length);
          expect(new Set(seen)).toEqual(new Set(questions.map((x) => x.question)));
        },
      ),
    );
  });

  it("links exactly the pairs sameQuestion joins, whatever stems are common", () => {
    const words = [
      "install",
      "remove",
      "nvidia",
      "drivers",
      "ubuntu",
      "wifi",
      "suspend",
      "24.04",
      "the",
    ];
    const wording = fc
      .array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 })
      .map((w) => `how do I ${w.join(" ")}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(wording, { maxLength: 15 }),
        fc.constantFrom(0.3, 0.5, 0.65, 0.8, 1),
        (texts, threshold) => {
          const key = ([a, b]: readonly [string, string]) => [a, b].sort().join("|");
          const linked = new Set([...questionMatcher(threshold)(texts)].map(key));
          const expected = new Set<string>();
          for (const [i, a] of texts.entries()) {
            for (const b of texts.slice(i + 1)) {
              if (sameQuestion(a, b, threshold)) expected.add(key([a, b]));
            }
          }
          expect(linked).toEqual(expected);
        },
      ),
    );
  });
});
