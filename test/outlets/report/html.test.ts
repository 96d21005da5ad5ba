import { createHash } from "node:crypto";
import { buildReport, embedJson, loadReportAssets, renderReportHtml } from "convoseg/report";
import { describe, expect, it } from "vitest";
import { ALL_MESSAGES, CANDIDATES, INJECTION, NOW, SEGMENTS, SETTLE } from "./fixtures.js";

describe("report HTML", () => {
  it("embeds JSON that no text can close a script element with", () => {
    const json = embedJson({ text: INJECTION, more: "a & b <!-- c --> \u2028" });
    expect(json).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(json)).toEqual({ text: INJECTION, more: "a & b <!-- c --> \u2028" });
  });

  it("is one file: its own script (allowed by hash) and styles, the data as inert JSON", async () => {
    const report = buildReport({
      segments: SEGMENTS,
      candidates: CANDIDATES,
      messages: ALL_MESSAGES,
      settle: SETTLE,
      now: NOW,
      generatedAt: NOW,
    });
    const assets = await loadReportAssets();
    const html = renderReportHtml(report, assets);
    // The three script elements (data, page, texts) close where they should, nothing else does,
    // and no tag of the chat's is there to be parsed. (Booleans: a failure prints no megabytes.)
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    const markup = html.replace(assets.script, "");
    expect(/<(img|b|i|em)\b/.test(markup)).toBe(false);
    // Nothing fetched: no stylesheet link, no script or image from elsewhere.
    expect(/<link\b|<script\b[^>]*\ssrc=/i.test(markup)).toBe(false);
    const hash = createHash("sha256").update(assets.script).digest("base64");
    expect(html.includes(`script-src 'sha256-${hash}'`)).toBe(true);
    expect(html.includes(`<script>${assets.script}</script>`)).toBe(true);
    // The chart library is in the bundle, minified.
    expect(assets.script).toContain("uplot");
    expect(assets.script.length).toBeLessThan(150_000);
  });

  it("refuses assets that would end their element early", () => {
    const report = buildReport({ segments: [], settle: SETTLE, now: NOW, generatedAt: NOW });
    expect(() => renderReportHtml(report, { script: "x('</script>')", style: "" })).toThrow(
      /the report's script contains a closing tag/,
    );
  });
});
