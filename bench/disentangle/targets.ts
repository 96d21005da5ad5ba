/**
 * Issue 38's targets for the reply linker, read off a bench run: exact-conversation F, link F,
 * "whole" at a bounded "mixing" (all on Ubuntu test), lines a second on one core in every group,
 * and the model file's size. Each says its value and whether it is met, so that a run says at the
 * end what stands without a reader comparing its tables to the issue by hand.
 */

/** What a target reads of one method's results in one group. */
export interface LinkedScores {
  exact: { f: number };
  link: { f: number };
  whole: number;
  mixing: number;
  /** Lines a second of CPU time, the best sample. */
  messagesPerSecond: number;
}

export interface TargetGroup {
  group: string;
  /** The linker's results in this group. */
  linked: LinkedScores;
}

export interface TargetVerdict {
  target: string;
  value: string;
  met: boolean;
}

/** The group whose scores the issue's quality targets name. */
const TARGET_GROUP = "ubuntu test";
const MIN_EXACT_F = 38;
const MIN_LINK_F = 70;
const MIN_WHOLE = 80;
const MAX_MIXING = 1.5;
const MIN_LINES_PER_SECOND = 20_000;
/** 5 MB, in the decimal units the docs give sizes in (kB: 1,000 bytes). */
const MAX_MODEL_BYTES = 5_000_000;

/**
 * The verdicts of a run's `groups` and the shipped model's size in bytes; the quality targets
 * only when the run holds TARGET_GROUP, the speed target only when it holds a group.
 */
export function issueTargets(groups: readonly TargetGroup[], modelBytes: number): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const test = groups.find((g) => g.group === TARGET_GROUP)?.linked;
  if (test !== undefined) {
    verdicts.push(
      {
        target: `exact F >= ${MIN_EXACT_F}`,
        value: test.exact.f.toFixed(1),
        met: test.exact.f >= MIN_EXACT_F,
      },
      {
        target: `link F >= ${MIN_LINK_F}`,
        value: test.link.f.toFixed(1),
        met: test.link.f >= MIN_LINK_F,
      },
      {
        target: `whole >= ${MIN_WHOLE}% at mixing <= ${MAX_MIXING.toFixed(2)}`,
        value: `${test.whole.toFixed(1)}% at ${test.mixing.toFixed(2)}`,
        met: test.whole >= MIN_WHOLE && test.mixing <= MAX_MIXING,
      },
    );
  }
  const slowest = [...groups].sort(
    (a, b) => a.linked.messagesPerSecond - b.linked.messagesPerSecond,
  )[0];
  if (slowest !== undefined) {
    const perSecond = slowest.linked.messagesPerSecond;
    verdicts.push({
      target: `${MIN_LINES_PER_SECOND.toLocaleString("en-US")} lines a second on one core in every group (best sample)`,
      value: `${Math.round(perSecond).toLocaleString("en-US")} (${slowest.group}, the slowest)`,
      met: perSecond >= MIN_LINES_PER_SECOND,
    });
  }
  verdicts.push({
    target: "model file under 5 MB",
    value: `${Math.round(modelBytes / 1000).toLocaleString("en-US")} kB`,
    met: modelBytes < MAX_MODEL_BYTES,
  });
  return verdicts;
}

/** One line of the verdicts, as the other benches end theirs. */
export function formatTargets(verdicts: readonly TargetVerdict[]): string {
  const said = verdicts.map((v) => `${v.target}: ${v.value}, ${v.met ? "met" : "NOT met"}`);
  return `targets of issue 38 (the linker; quality on ${TARGET_GROUP}): ${said.join("; ")}`;
}
