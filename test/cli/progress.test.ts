import { describe, expect, it } from "vitest";
import { Progress } from "../../cli/shared/progress.js";

function setup(isTTY: boolean) {
  let time = 0;
  const written: string[] = [];
  const progress = new Progress(
    { isTTY, write: (text: string) => written.push(text) },
    { clock: () => time },
  );
  const advance = (ms: number) => {
    time += ms;
  };
  return { progress, written, advance };
}

describe("Progress", () => {
  it("stays quiet for work under a second", () => {
    const { progress, written, advance } = setup(true);
    for (let i = 0; i < 9; i++) {
      advance(100);
      progress.update(() => `step ${i}`);
    }
    progress.finish();
    expect(written).toEqual([]);
  });

  it("redraws one terminal line after the first second and clears it at the end", () => {
    const { progress, written, advance } = setup(true);
    advance(1000);
    progress.update(() => "a");
    advance(50);
    progress.update(() => "too soon");
    advance(100);
    progress.update(() => "b");
    progress.finish();
    expect(written).toEqual(["\r\x1b[2Ka", "\r\x1b[2Kb", "\r\x1b[2K"]);
  });

  it("writes whole lines every few seconds to a pipe", () => {
    const { progress, written, advance } = setup(false);
    advance(1000);
    progress.update(() => "a");
    advance(1000);
    progress.update(() => "skipped");
    advance(4000);
    progress.update(() => "b");
    progress.finish();
    expect(written).toEqual(["a\n", "b\n"]);
  });

  it("writes a line to a pipe only when it says something new", () => {
    const { progress, written, advance } = setup(false);
    for (const text of ["opening", "opening", "opening", "replay: 10", "opening"]) {
      advance(5000);
      progress.update(() => text);
    }
    expect(written).toEqual(["opening\n", "replay: 10\n", "opening\n"]);
  });

  it("does not build the status text when nothing is shown", () => {
    const { progress } = setup(true);
    progress.update(() => {
      throw new Error("built");
    });
  });
});
