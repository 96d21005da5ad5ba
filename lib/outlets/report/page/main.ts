/**
 * The report page's script: reads the embedded data, draws the topics of each channel (the first
 * screen), the summary and the channel list, and shows one channel at a time (only the shown
 * channel has a timeline and rows in the DOM).
 */
import { parseSegmentAnchor, segmentAnchor } from "../anchors.js";
import type { ReportData } from "../data.js";
import { ChannelView } from "./channel.js";
import { renderChannelList } from "./channel-list.js";
import { byId, duration, el, time } from "./dom.js";
import { renderHealth } from "./health.js";
import { renderDigest, renderFaq, renderQuestions } from "./knowledge.js";
import { renderSearch } from "./search.js";
import type { ReportHit } from "./search-index.js";
import { renderSummary } from "./summary.js";
import { renderTopics } from "./topics.js";

const data = JSON.parse(byId("report-data").textContent ?? "") as ReportData;

byId("meta").replaceChildren(
  `generated ${time(data.generatedAt)} UTC, settle ${duration(data.settleMs)}`,
  ...data.sources.map(({ label, value }) =>
    el("span", { class: "source" }, `${label}: `, el("code", {}, value)),
  ),
);
renderSummary(byId("summary"), data);

const channelSection = byId("channel");
let view: ChannelView | undefined;
let shown = -1;
let firstDrawn = false;
const channelList = renderChannelList(byId("channels"), data, (channel, thread) => {
  if (channel !== shown) showChannel(channel);
  // A thread's row: its channel with only the thread's segments listed.
  view?.showThread(thread ?? -1);
  channelList.mark(channel, thread);
});
// The first screen: a topic leads to its channel's segments that support it.
renderTopics(byId("topics"), data, (channel, topic) => {
  if (channel !== shown) showChannel(channel);
  view?.showTopic(topic);
  channelList.mark(channel);
  channelSection.scrollIntoView({ block: "start" });
});

renderHealth(byId("health"), data);
renderDigest(byId("digest"), data);
renderFaq(byId("faq"), data);
renderQuestions(byId("questions"), data);

/** `#segment=<channel>/<segment>` (a digest's link, or one of the page's own): that segment. */
function followAnchor(): void {
  const anchor = parseSegmentAnchor(location.hash);
  if (anchor === undefined) return;
  const channel = data.channels.findIndex((c) => c.name === anchor.channel);
  const segment = data.channels[channel]?.segments.findIndex((s) => s.id === anchor.segmentId);
  if (segment === undefined || segment < 0) return;
  openSegment(channel, segment);
}
window.addEventListener("hashchange", followAnchor);

/** Shows segment `segment` of channel `channel` among all its segments (and message `position`). */
function openSegment(channel: number, segment: number, position?: number): void {
  if (channel !== shown) showChannel(channel);
  view?.showThread(-1);
  view?.select(segment, true, position);
  channelList.mark(channel);
  channelSection.scrollIntoView({ block: "start" });
}

/**
 * A search hit: a topic as its card shows it, else its segment as its anchor does (the anchor put
 * in the address, so that Back returns to the one before), a message among the segment's shown.
 */
function openHit(hit: ReportHit): void {
  const channel = data.channels[hit.channel];
  if (hit.kind === "topic" && hit.item >= 0) {
    if (hit.channel !== shown) showChannel(hit.channel);
    view?.showTopic(hit.item);
    channelList.mark(hit.channel);
  } else if (hit.segment >= 0) {
    history.pushState(
      null,
      "",
      `#${segmentAnchor(channel.name, channel.segments[hit.segment].id)}`,
    );
    openSegment(hit.channel, hit.segment, hit.kind === "message" ? hit.item : undefined);
    return;
  } else {
    if (hit.channel !== shown) showChannel(hit.channel);
    view?.showThread(-1);
    channelList.mark(hit.channel);
  }
  channelSection.scrollIntoView({ block: "start" });
}
renderSearch(byId("search"), data, openHit);

function showChannel(index: number): void {
  view?.destroy();
  shown = index;
  channelList.mark(index);
  view = new ChannelView(
    channelSection,
    index,
    data.channels[index],
    data.settleMs,
    {
      showThread: (thread) => {
        view?.showThread(thread);
        channelList.mark(index, thread < 0 ? undefined : thread);
      },
    },
    () => {
      if (firstDrawn) return;
      firstDrawn = true;
      // Marked once the first frame with the timeline is on screen: what the browser tests wait
      // for, and the time to first render they measure.
      requestAnimationFrame(() => {
        document.documentElement.dataset.renderedMs = String(Math.round(performance.now()));
        document.documentElement.dataset.ready = "true";
      });
    },
  );
}

if (data.channels.length > 0) {
  showChannel(0);
  followAnchor();
} else {
  channelSection.replaceChildren(el("p", { class: "muted" }, "No segments and no messages."));
  document.documentElement.dataset.ready = "true";
}
