import { readFileSync } from "node:fs";
import { DEFAULT_QUESTION_SIMILARITY, questionStems, sameQuestion } from "convoseg/faq";
import { describe, expect, it } from "vitest";
import { scorePairs, type TopicPair } from "../../../bench/topic-pairs.js";

describe("questionStems", () => {
  it("leaves out the asking, writes contractions, synonyms and derivations one way", () => {
    expect(questionStems("How do I install the NVIDIA drivers?")).toEqual([
      "driver",
      "install",
      "nvidia",
    ]);
    expect(questionStems("my wi-fi doesn't work")).toEqual(questionStems("wireless not working"));
    expect(questionStems("wifi stopped working")).toEqual(questionStems("wifi is broken"));
    expect(questionStems("how to enable hibernate")).toEqual(questionStems("enable hibernation"));
    expect(questionStems("turn off the firewall")).toEqual(questionStems("disable firewall"));
    expect(questionStems("my pc freezes randomly")).toEqual(
      questionStems("computer freeze random"),
    );
    expect(questionStems("upgrade to 22.04")).toContain("22.04");
    expect(questionStems("how do i ... ?")).toEqual([]);
  });
});

describe("sameQuestion", () => {
  it("joins rewordings and keeps opposite actions, other versions and other actions apart", () => {
    expect(sameQuestion("how do I remove a ppa?", "how to get rid of a ppa")).toBe(true);
    expect(
      sameQuestion("how do I install nvidia drivers", "how do I uninstall nvidia drivers"),
    ).toBe(false);
    expect(sameQuestion("upgrade ubuntu to 22.04", "upgrade ubuntu to 24.04")).toBe(false);
    expect(
      sameQuestion(
        "connect to a wireless network from the terminal",
        "share a wireless network from the terminal",
      ),
    ).toBe(false);
    expect(sameQuestion("dual boot with windows", "remove windows from dual boot")).toBe(false);
    expect(sameQuestion("remove windows from dual boot", "dual boot with windows")).toBe(false);
    expect(sameQuestion("wifi", "")).toBe(false);
    // A lower threshold joins more.
    expect(sameQuestion("how to install docker", "install docker compose", 0.5)).toBe(true);
    expect(sameQuestion("how to install steam", "install steam games elsewhere")).toBe(false);
  });

  it("keeps one-word questions apart when they ask for another kind of answer", () => {
    // Seen on the IRC example: both have "ubuntu" alone for content.
    expect(sameQuestion("What's Ubuntu?", "How do I get Ubuntu?")).toBe(false);
    expect(sameQuestion("what is ubuntu", "What's Ubuntu?")).toBe(true);
    expect(sameQuestion("which is ubuntu?", "what's ubuntu")).toBe(true);
    expect(sameQuestion("where is grub?", "why grub?")).toBe(false);
    // More content words say enough: the kind is not counted.
    expect(sameQuestion("how do I mount a usb drive", "what mounts a usb drive")).toBe(true);
  });

  it("holds precision ≥ 0.95 and recall ≥ 0.8 on the labelled question pairs", () => {
    const file = new URL("../../../bench/faq/pairs.jsonl", import.meta.url);
    const pairs = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as TopicPair);
    expect(pairs.length).toBeGreaterThanOrEqual(150);
    const keys = new Set(pairs.map((p) => [p.a, p.b].sort().join("\n")));
    expect(keys.size).toBe(pairs.length);
    expect(pairs.filter((p) => !p.same).length).toBeGreaterThan(70);
    const scores = scorePairs(pairs, (a, b) => sameQuestion(a, b, DEFAULT_QUESTION_SIMILARITY));
    expect(scores.precision, JSON.stringify(scores.falsePositives)).toBeGreaterThanOrEqual(0.95);
    expect(scores.recall, JSON.stringify(scores.falseNegatives)).toBeGreaterThanOrEqual(0.8);
  });
});
