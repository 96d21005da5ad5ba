/** The storing line's estimate of an export import's rest, from the files read so far. */
import { describe, expect, it } from "vitest";
import { readingEta } from "../../cli/shared/export-input.js";

const progress = (filesDone: number, filesTotal?: number) => ({
  input: "export.zip",
  format: "slack" as const,
  file: "general/2024-01-01.json",
  filesDone,
  ...(filesTotal === undefined ? {} : { filesTotal }),
  messages: 1000,
});

describe("readingEta", () => {
  it("says the file reached and the time left at the pace so far", () => {
    expect(readingEta(progress(40, 300), 20_000)).toBe("file 40 of 300, about 2m 10s left");
    expect(readingEta(progress(300, 300), 60_000)).toBe("file 300 of 300");
  });

  it("says nothing where it cannot know: one file, none done, nothing read yet", () => {
    expect(readingEta(progress(0, 300), 5_000)).toBe("");
    expect(readingEta(progress(1, 1), 5_000)).toBe("");
    expect(readingEta(progress(3), 5_000)).toBe("");
    expect(readingEta(undefined, 5_000)).toBe("");
  });
});
