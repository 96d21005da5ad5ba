import {
  InvalidConversationIdError,
  InvalidMessageError,
  newConversationId,
  Sequence,
  snapshotBatch,
  textMessage,
  validateConversationId,
  validateMessage,
  validateWriteOutcome,
  type WriteOutcome,
} from "convoseg/history";
import { describe, expect, it } from "vitest";

const reasonOf = (value: unknown): string => {
  try {
    validateConversationId(value);
    return "valid";
  } catch (error) {
    if (error instanceof InvalidConversationIdError) return error.reason;
    throw error;
  }
};

describe("conversation ids", () => {
  it.each([
    ["", "empty"],
    ["a\ud800b", "invalid UTF-16"],
    [" padded", "leading or trailing whitespace"],
    ["x\n", "leading or trailing whitespace"],
    ["\u00a0nbsp", "leading or trailing whitespace"],
    ["nel\u0085", "leading or trailing whitespace"],
    ["a\u0000b", "contains control character U+0000"],
    ["a\u007fb", "contains control character U+007F"],
    ["a\u009fb", "contains control character U+009F"],
    ["tab\tinside", "contains control character U+0009"],
  ])("rejects %j: %s", (value, reason) => {
    expect(reasonOf(value)).toBe(reason);
  });

  it.each(["general", "interior spaces ok", "\ufeffbom", "x".repeat(5000), "🙂"])(
    "accepts %j",
    (value) => {
      expect(newConversationId(value)).toBe(value);
    },
  );

  it("formats the error like the original", () => {
    expect(() => newConversationId("")).toThrow("history: invalid conversation ID: empty");
  });
});

describe("validateWriteOutcome", () => {
  const failure = new Error("boom");
  it.each<[WriteOutcome, number, unknown]>([
    [{ accepted: 2, uncertain: false }, 2, undefined],
    [{ accepted: 0, uncertain: false }, 0, undefined],
    [{ accepted: 0, uncertain: false }, 2, failure],
    [{ accepted: 1, uncertain: false }, 2, failure],
    [{ accepted: 0, uncertain: true }, 1, failure],
    [{ accepted: 3, uncertain: false }, 3, failure],
  ])("accepts %o for %d messages", (outcome, count, error) => {
    expect(validateWriteOutcome(outcome, count, error)).toBeUndefined();
  });

  it.each<[WriteOutcome, number, unknown, string]>([
    [{ accepted: -1, uncertain: false }, 1, failure, "accepted -1 of 1 messages"],
    [{ accepted: 2, uncertain: false }, 1, failure, "accepted 2 of 1 messages"],
    [{ accepted: 0, uncertain: false }, -1, failure, "accepted 0 of -1 messages"],
    [{ accepted: 1, uncertain: true }, 1, failure, "no remaining message can be uncertain"],
    [{ accepted: 0, uncertain: true }, 0, failure, "no remaining message can be uncertain"],
    [{ accepted: 0, uncertain: false }, 1, undefined, "success must acknowledge all 1 messages"],
    [{ accepted: 0, uncertain: true }, 1, undefined, "success must acknowledge all 1 messages"],
  ])("rejects %o for %d messages", (outcome, count, error, reason) => {
    expect(validateWriteOutcome(outcome, count, error)?.message).toBe(
      `history: invalid write outcome: ${reason}`,
    );
  });
});

describe("messages", () => {
  it("names the index and field of the first invalid message of a batch", () => {
    const bad = { role: "user", parts: [{ type: "text", text: 5 }] } as never;
    expect(() => snapshotBatch([textMessage("user", "ok"), bad])).toThrow(InvalidMessageError);
    expect(() => snapshotBatch([textMessage("user", "ok"), bad])).toThrow(
      "messages[1].parts[0].text",
    );
  });

  it.each([
    [{ role: "robot", parts: [{ type: "text", text: "x" }] }, "role"],
    [{ role: "user", parts: [] }, "parts"],
    [
      { role: "user", parts: [{ type: "tool-call", id: "1", name: "f", arguments: "{}" }] },
      "parts[0]",
    ],
    [
      { role: "assistant", parts: [{ type: "tool-result", callId: "1", name: "f", result: "" }] },
      "parts[0]",
    ],
    [
      { role: "user", parts: [{ type: "media", mimeType: "image/png", data: [1] }] },
      "parts[0].data",
    ],
    [{ role: "user", parts: [{ type: "text", text: "x" }], metadata: { f: () => 1 } }, "metadata"],
    [{ role: "user", parts: [{ type: "text", text: "x" }], id: "" }, "id"],
    [{ role: "user", parts: [{ type: "text", text: "x" }], ts: Number.NaN }, "ts"],
    [{ role: "user", parts: [{ type: "text", text: "x" }], guild: "x/../evil" }, "guild"],
    [{ role: "user", parts: [{ type: "text", text: "x" }], chatUsername: "a b" }, "chatUsername"],
  ])("rejects %j at %s", (message, field) => {
    try {
      validateMessage(message);
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidMessageError).field).toBe(field);
    }
  });

  it("snapshots: later changes by the caller do not reach the copy", () => {
    const tags = ["a"];
    const original = textMessage("user", "hi", { metadata: { tags } });
    const [copy] = snapshotBatch([original]);
    tags.push("b");
    original.parts.push({ type: "text", text: "more" });
    expect(copy).toEqual(textMessage("user", "hi", { metadata: { tags: ["a"] } }));
  });
});

describe("Sequence", () => {
  it("ignores a clock that moves backward", () => {
    const sequence = new Sequence(1);
    expect(sequence.reserveAt(1000n, 3)).toBe(1000n);
    expect(sequence.reserveAt(900n, 2)).toBe(1003n);
    expect(sequence.reserveAt(1003n, 1)).toBe(1005n);
  });

  it("reserves contiguous runs at its stride", () => {
    const fine = new Sequence(1);
    expect(fine.reserveAt(1000n, 4)).toBe(1000n);
    expect(fine.reserveAt(1000n, 1)).toBe(1004n);
    const coarse = new Sequence(100);
    expect(coarse.reserveAt(1000n, 4)).toBe(1000n);
    expect(coarse.reserveAt(1000n, 1)).toBe(1400n);
  });

  it("hands out disjoint runs to concurrent callers", async () => {
    const sequence = new Sequence();
    const firsts = await Promise.all(Array.from({ length: 16 }, async () => sequence.reserve(8)));
    const positions = new Set(
      firsts.flatMap((first) => [...Array(8)].map((_, i) => first + BigInt(i))),
    );
    expect(positions.size).toBe(128);
  });

  it("follows the wall clock when it is ahead", () => {
    const before = BigInt(Date.now()) * 1_000_000n;
    expect(new Sequence().reserve(1)).toBeGreaterThanOrEqual(before);
  });

  it.each([0, -1, 0.5])("rejects stride %d", (stride) => {
    expect(() => new Sequence(stride)).toThrow("history: sequence stride must be positive");
  });

  it("rejects a non-positive count without consuming positions", () => {
    const sequence = new Sequence();
    expect(() => sequence.reserveAt(10n, 0)).toThrow("history: sequence count must be positive");
    expect(sequence.reserveAt(10n, 1)).toBe(10n);
  });

  it("refuses to pass the int64 range, consuming nothing", () => {
    const sequence = new Sequence(1);
    expect(() => sequence.reserveAt(Sequence.MAX, 2)).toThrow(
      "history: sequence reservation exceeds int64",
    );
    expect(sequence.reserveAt(Sequence.MAX, 1)).toBe(Sequence.MAX);
    expect(() => sequence.reserveAt(1n, 1)).toThrow("history: sequence exhausted");
  });
});
