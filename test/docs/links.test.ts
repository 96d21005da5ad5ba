/** Every relative link of the README and docs/ reaches a file, and every anchor a heading. */
import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { anchors, links, manualFiles, ROOT, readManual } from "./markdown.js";

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

describe("the manual's links", () => {
  const files = manualFiles();

  it("covers the README and the docs pages", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/architecture.md");
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files)("%s: relative links resolve, anchors name headings", (file) => {
    const broken: string[] = [];
    for (const { target, line } of links(readManual(file))) {
      if (EXTERNAL.test(target)) continue;
      const [path, anchor] = target.split("#", 2);
      const resolved = path === "" ? file : normalize(join(dirname(file), decodeURI(path)));
      const absolute = join(ROOT, resolved);
      if (!existsSync(absolute)) {
        broken.push(`line ${line}: ${target}: no file ${resolved}`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (!resolved.endsWith(".md") || statSync(absolute).isDirectory()) {
        broken.push(`line ${line}: ${target}: an anchor into ${resolved}, which is no page`);
      } else if (!anchors(readManual(resolved)).has(anchor)) {
        broken.push(`line ${line}: ${target}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
