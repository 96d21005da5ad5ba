/**
 * A channel in linked mode: two conversations running at once (a1's and b1's), a thread whose
 * root b1 also names a linked conversation, a join in no conversation, and a1's conversation
 * resumed after a long silence. The links of a2 and b2 are on the messages (as the workspace's
 * store has them), a3's only on its segment's inline body (as `run --report` gets it); r1's
 * platform reply wins over the linker's.
 */
import type { ReportMessage, SegmentRecord } from "convoseg/report";

const MINUTE = 60_000;
export const LINKED_T0 = Date.UTC(2004, 10, 15, 0, 18);
export const LINKED_CHANNEL = "ubuntu";

const message = (
  id: string,
  minute: number,
  user: string | undefined,
  text: string,
  more: Partial<ReportMessage> = {},
): ReportMessage => ({
  id,
  ts: LINKED_T0 + minute * MINUTE,
  channel: LINKED_CHANNEL,
  ...(user === undefined ? {} : { user }),
  text,
  ...more,
});

export const LINKED_MESSAGES: ReportMessage[] = [
  message("a1", 0, "ana", "anyone know how to mount an ntfs disk?"),
  message("b1", 1, "bo", "lunch, anyone?"),
  message("a2", 2, "cy", "ana: use ntfs-3g", { inferredReplyTo: "a1" }),
  message("b2", 3, "dee", "bo: sure", { inferredReplyTo: "b1" }),
  message("j1", 4, undefined, "eve has joined #ubuntu", { kind: "system" }),
  message("r1", 5, "eve", "ntfs-3g can write too", { replyTo: "a1", inferredReplyTo: "b1" }),
  message("x1", 6, "fay", "pizza", { thread: "b1" }),
  message("a3", 40, "ana", "thanks cy, it mounts"),
];

const byId = new Map(LINKED_MESSAGES.map((m) => [m.id, m]));

const segment = (
  segmentId: string,
  ids: string[],
  more: Partial<SegmentRecord> = {},
): SegmentRecord => {
  const [first, last] = [byId.get(ids[0]), byId.get(ids[ids.length - 1])] as ReportMessage[];
  return {
    channel: LINKED_CHANNEL,
    segmentId,
    messageIds: ids,
    late: false,
    belongsAfter: null,
    first: { id: first.id, ts: first.ts },
    last: { id: last.id, ts: last.ts },
    ...more,
  };
};

/** In delivery order. */
export const LINKED_SEGMENTS: SegmentRecord[] = [
  segment("s1", ["b1", "b2"], { conversation: "b1" }),
  segment("s2", ["a1", "a2", "r1"], { conversation: "a1" }),
  segment("s3", ["x1"], { thread: "b1" }),
  segment("s4", ["j1"]),
  segment("s5", ["a3"], {
    conversation: "a1",
    messages: [{ id: "a3", inferredReplyTo: "a2" }],
  }),
];
