import { sameTopic, stem, topicKey, topicWords } from "convoseg/topics";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const same = sameTopic;

describe("stem", () => {
  it("gives a word's plural and inflections one stem", () => {
    for (const family of [
      ["configure", "configured", "configuring", "configures"],
      ["cache", "caches", "cached", "caching"],
      ["log", "logs", "logged", "logging"],
      ["install", "installs", "installed", "installing"],
      ["library", "libraries"],
      ["proxy", "proxies"],
      ["cookie", "cookies"],
      ["patch", "patches"],
      ["process", "processes"],
      ["setting", "settings"],
      ["embed", "embedded"],
      ["copy", "copied", "copying"],
    ]) {
      expect(new Set(family.map(stem)), family.join(" ")).toHaveLength(1);
    }
  });

  it("keeps short words, versions and names with + or # whole", () => {
    for (const word of ["dns", "vms", "ios", "ipv6", "c++", "c#", "f#", "x11", "gtk3"]) {
      expect(stem(word)).toBe(word);
    }
  });

  it("keeps different words apart", () => {
    expect(stem("dns")).not.toBe(stem("dnssec"));
    expect(stem("status")).toBe("status");
    expect(stem("redis")).toBe("redis");
    expect(stem("access")).toBe("access");
  });

  it("is its own stem", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,14}$/), (word) => {
        expect(stem(stem(word))).toBe(stem(word));
      }),
    );
  });
});

describe("topicKey", () => {
  it("sets case, punctuation, plurals, stop words and word order aside", () => {
    expect(same("GRUB bootloader", "grub  bootloaders")).toBe(true);
    expect(same("Nginx reverse-proxy", "reverse proxy (nginx)")).toBe(true);
    expect(same("ssh keys", "SSH key")).toBe(true);
    expect(same("configuring the firewall", "firewall configuration")).toBe(false);
    expect(same("docker networking", "networking in docker")).toBe(false);
    expect(same("problems with wifi", "wifi")).toBe(true);
    expect(same("ubuntu's installer", "Ubuntu installer")).toBe(true);
  });

  it("joins separated words into a compound the channel writes as one word", () => {
    expect(same("grub boot loader", "grub bootloader")).toBe(true);
    expect(same("boot-loader", "bootloader")).toBe(true);
    expect(same("e-mail setup", "email setup")).toBe(true);
    // Without the one-word form among the topics, nothing is joined.
    expect(topicKey("boot loader")).toBe("boot loader");
  });

  it("keeps the order where a word relates two things in a direction", () => {
    expect(same("linux on windows", "windows on linux")).toBe(false);
    expect(same("migrating from python 2 to python 3", "migrating from python 3 to python 2")).toBe(
      false,
    );
    expect(same("wine on linux", "Wine on Linux")).toBe(true);
  });

  it("keeps versions and names apart", () => {
    expect(same("python 2", "python 3")).toBe(false);
    expect(same("dns", "dnssec")).toBe(false);
    expect(same("c++", "c#")).toBe(false);
    expect(same("c++", "c")).toBe(false);
    expect(same("ipv4", "ipv6")).toBe(false);
  });

  it("keeps a topic of stop words only", () => {
    expect(topicKey("help")).toBe("help");
    expect(topicWords("What's up?")).toEqual(["what", "up"]);
  });

  it("is symmetric", () => {
    fc.assert(
      fc.property(topic, topic, (a, b) => {
        expect(sameTopic(a, b)).toBe(sameTopic(b, a));
      }),
    );
  });
});

const WORDS = ["boot", "loader", "bootloader", "grub", "the", "on", "linux", "issues", "wi", "fi"];
const topic = fc
  .array(fc.constantFrom(...WORDS, "bootloaders", "Boot-Loader", "wifi", "Linux"), {
    minLength: 1,
    maxLength: 4,
  })
  .map((words) => words.join(" "));
