/**
 * A channel with threads segmented on their own: its own segment (the root of thread "r1" among
 * its messages), a segment of r1's replies that names no thread (as lines before segments named
 * their thread), a second r1 segment that names it, a thread whose root only its line carries
 * (`threadRoot`), and one whose root nobody has. The root's author and text try to break out of
 * the page's markup.
 */
import type { ChatMessage } from "convoseg/messages";
import type { SegmentRecord } from "convoseg/report";

const MINUTE = 60_000;
export const THREAD_T0 = Date.UTC(2025, 2, 3, 8);
export const THREAD_NOW = THREAD_T0 + 48 * 60 * MINUTE;
const CHANNEL = "C0DEV";
export const ROOT_AUTHOR = "<script>window.__pwned = 4</script>ana</tr>";
const ROOT_TEXT =
  "has anyone </tr></table><script>window.__pwned = 5</script> tried the new build on linux yet?";

const message = (
  id: string,
  minute: number,
  user: string,
  text: string,
  more: Partial<ChatMessage> = {},
): ChatMessage => ({
  id,
  ts: THREAD_T0 + minute * MINUTE,
  channel: CHANNEL,
  user,
  text,
  channelName: "dev",
  ...more,
});

export const THREAD_MESSAGES: ChatMessage[] = [
  message("r1", 0, ROOT_AUTHOR, ROOT_TEXT),
  message("c2", 1, "bo", "lunch?"),
  message("t1", 2, "bo", "yes, it fails on linux", { thread: "r1" }),
  message("t2", 3, "cy", "same here", { thread: "r1", replyTo: "t1" }),
  message("c3", 4, "cy", "about that earlier thing", { replyTo: "r0" }),
  message("u1", 5, "dee", "following up", { thread: "r9" }),
  message("v1", 6, "dee", "bump", { thread: "r8" }),
  message("t3", 30, "ana", "fixed in build 43", { thread: "r1" }),
];

const byId = new Map(THREAD_MESSAGES.map((m) => [m.id, m]));

const segment = (
  segmentId: string,
  ids: string[],
  more: Pick<SegmentRecord, "thread" | "threadRoot"> = {},
): SegmentRecord => {
  const [first, last] = [byId.get(ids[0]), byId.get(ids[ids.length - 1])] as ChatMessage[];
  return {
    channel: CHANNEL,
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
export const THREAD_SEGMENTS: SegmentRecord[] = [
  segment("s0", ["r1", "c2", "c3"]),
  segment("s1", ["t1", "t2"]),
  segment("s2", ["u1"], {
    thread: "r9",
    threadRoot: {
      author: "eve",
      text: "is the\nstaging   database down again, or is it just me being unlucky today?",
    },
  }),
  segment("s3", ["v1"]),
  segment("s4", ["t3"], { thread: "r1" }),
];
