/**
 * Your data, not the demo's (issue 40 §3): the generated sample's channels are marked as the
 * sample's in the workspace, listed after the user's own by `channels` and the report, a name both
 * carry is refused with both listed, and the user's first input beside the sample is told so.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it, vi } from "vitest";
import { runCli } from "../support/cli.js";
import { SLACK_FOLDER } from "./export-fixtures.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

const SAMPLE = ["announcements", "dev", "general", "help", "random", "support"];

function reportChannels(file: string): { name: string; sample?: true }[] {
  const html = readFileSync(file, "utf8");
  const json = /<script type="application\/json" id="report-data"[^>]*>([\s\S]*?)<\/script>/.exec(
    html,
  );
  if (!json) throw new Error(`no report data in ${file}`);
  return JSON.parse(json[1]).channels;
}

describe("the sample beside the user's chat", () => {
  it("is marked, listed last, told of, and a name both carry is refused", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-sample-")), "ws");
    const ws = ["--workspace", dir];
    // Segments only: what is marked and listed does not need extraction.
    const FAST = ["--settle", "1h", "--tick", "1h", "--extractor", "none"];
    const demo = await cli(["run", ...FAST, ...ws]);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stderr).not.toContain("holds only the generated sample");
    expect(JSON.parse(readFileSync(join(dir, "workspace.json"), "utf8")).sample).toEqual(SAMPLE);

    const own = await cli(["run", "--input", SLACK_FOLDER, ...FAST, ...ws]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).toContain(
      "run: this workspace holds only the generated sample (6 channels); your channels go in beside it",
    );
    expect(own.stderr).toContain("--fresh starts from empty");
    // Once the user's chat is in, the workspace no longer holds only the sample: said once.
    const again = await cli(["run", "--input", SLACK_FOLDER, ...FAST, ...ws]);
    expect(again.stderr).not.toContain("holds only the generated sample");

    const listed = (await cli(["channels", "--json", ...ws])).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { channel: string; sample: boolean; platform: string });
    const firstSample = listed.findIndex((c) => c.sample);
    expect(firstSample).toBeGreaterThan(0);
    expect(listed.slice(0, firstSample).every((c) => c.platform === "slack")).toBe(true);
    expect(
      listed
        .slice(firstSample)
        .map((c) => c.channel)
        .sort(),
    ).toEqual(SAMPLE);
    const text = await cli(["channels", ...ws]);
    // The sample's messages carry no name: its id is the name, its platform the sample.
    expect(text.stdout).toMatch(/^- +random +sample +150 /m);

    const out = join(dir, "..", "report.html");
    const report = await cli(["report", "--out", out, ...ws]);
    expect(report.code, report.stderr).toBe(0);
    const channels = reportChannels(out);
    const marked = channels.filter((c) => c.sample).map((c) => c.name);
    expect(marked.sort()).toEqual(SAMPLE);
    expect(channels.slice(0, channels.length - SAMPLE.length).some((c) => c.sample)).toBe(false);

    // The Slack export's #general and the sample's `general`: neither is guessed.
    const ambiguous = await cli(["topics", "general", ...ws]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('"general" names 2 channels (C0GENERAL, general)');
  }, 420_000); // Seven commands in sequence, each starting DynamoDB Local: CI runs slower than a desk.
});
