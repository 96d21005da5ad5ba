import type { Topic } from "convoseg/knowledge/read";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControls, formatTopics, terminalSafe } from "../../cli/shared/format.js";
import { runCli } from "../support/cli.js";

/** Anything a terminal would act on rather than show; the progress redraw aside. */
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe("escapeControls", () => {
  it("escapes escape sequences, bidi overrides and invisible characters", () => {
    expect(escapeControls("x\x1b[2J")).toBe("x\\u001b[2J");
    expect(escapeControls("tag\u202e\u2066\u200b\ufeff")).toBe("tag\\u202e\\u2066\\u200b\\ufeff");
    expect(escapeControls("a\u2028b\r\nc\u0085")).toBe("a\\u2028b\\u000d\\u000ac\\u0085");
    expect(escapeControls("flag\u{e0067}")).toBe("flag\\u{e0067}");
  });

  it("keeps the joiners emoji and scripts are written with", () => {
    expect(escapeControls("👩\u200d💻 می\u200cخواهم")).toBe("👩\u200d💻 می\u200cخواهم");
  });
});

describe("terminalSafe", () => {
  it("keeps newlines, tabs and the progress redraw, escapes the rest", () => {
    expect(terminalSafe("\r\x1b[2Kreplay: 1 of 2\n\tx\x1b[2J\u202e\r")).toBe(
      "\r\x1b[2Kreplay: 1 of 2\n\tx\\u001b[2J\\u202e\\u000d",
    );
  });

  it("escapes an invisible character beyond the BMP so that JSON output still parses", () => {
    const tag = "\u{e0020}";
    expect(terminalSafe(JSON.stringify({ tag }))).toBe('{"tag":"\\udb40\\udc20"}');
    expect(JSON.parse(terminalSafe(JSON.stringify({ tag })))).toEqual({ tag });
  });

  it("leaves nothing raw for the terminal to act on, and JSON output meaning the same", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const safe = terminalSafe(JSON.stringify({ text }));
        expect(safe).not.toMatch(RAW);
        expect(JSON.parse(safe)).toEqual({ text });
      }),
    );
  });
});

describe("a channel's topics", () => {
  const topic: Topic = {
    topic: "deploys",
    normalizedTopic: "deploys",
    aliases: [],
    segments: 1,
    firstSeen: 0,
    lastSeen: 0,
    bestConfidence: 0.5,
    bestReason: "",
    tags: [],
    evidence: [],
  };

  it("are headed by the channel's name and id, and count one of a thing as one", () => {
    expect(formatTopics("C0GENERAL", [topic], "general").split("\n").slice(0, 2)).toEqual([
      "general (C0GENERAL): 1 topic, most supported first",
      "- deploys: 1 segment, 1970-01-01T00:00Z to 1970-01-01T00:00Z, confidence 0.50",
    ]);
    // IRC's `#ubuntu` of the channel `ubuntu` says the same thing once, not twice.
    expect(formatTopics("ubuntu", [topic], "#ubuntu").split("\n")[0]).toBe(
      "#ubuntu: 1 topic, most supported first",
    );
    expect(formatTopics("desk", [topic, { ...topic, segments: 2 }])).toMatch(
      /^"desk": 2 topics, most supported first\n- deploys: 1 segment, [^\n]*\n- deploys: 2 segments, /,
    );
  });
});

describe("terminal output from data", () => {
  it("escapes a topic's tags, name and reason", () => {
    const topic: Topic = {
      topic: "deploy\x1b[2J",
      normalizedTopic: "deploy",
      aliases: ["deploys\u202e", "Deploy"],
      segments: 1,
      firstSeen: 0,
      lastSeen: 0,
      bestConfidence: 0.5,
      bestReason: "why\u202e",
      tags: ["ops\u202eevil"],
      evidence: [],
    };
    const text = formatTopics("chan\u2067", [topic]);
    expect(text.replaceAll("\n", "")).not.toMatch(RAW);
    expect(text).toContain("tags ops\\u202eevil");
    expect(text).toContain("also: deploys\\u202e, Deploy");
  });

  it("escapes what every command writes, usage errors and unknown commands included", async () => {
    const outputs = [
      await runCli(["\u202ecommand\x1b[2J"], 0),
      await runCli(["segment", "-", "--min-items", "\u202e1\x1b[2J"], 0),
      await runCli(["run", "--model", "x\x1b[2J", "--route", "\u202e"], 0),
    ];
    for (const { code, stdout, stderr } of outputs) {
      expect(code).toBe(2);
      expect(stdout + stderr.replaceAll("\n", "")).not.toMatch(RAW);
    }
    expect(outputs[0].stderr).toContain('unknown command "\\u202ecommand\\u001b[2J"');
    expect(outputs[1].stderr).toContain("\\u202e1\\u001b[2J");
  });
});
