/**
 * The report page's script: reads the embedded data, draws the summary and the channel list, and
 * shows one channel at a time (only the shown channel has a timeline and rows in the DOM).
 */
import type { ReportData } from "../data.js";
import { ChannelView } from "./channel.js";
import { byId, duration, el, time } from "./dom.js";
import { renderChannelList, renderSummary } from "./summary.js";

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
let firstDrawn = false;
const channelList = renderChannelList(byId("channels"), data, showChannel);

function showChannel(index: number): void {
  view?.destroy();
  channelList.mark(index);
  view = new ChannelView(channelSection, index, data.channels[index], data.settleMs, () => {
    if (firstDrawn) return;
    firstDrawn = true;
    // Marked once the first frame with the timeline is on screen: what the browser tests wait
    // for, and the time to first render they measure.
    requestAnimationFrame(() => {
      document.documentElement.dataset.renderedMs = String(Math.round(performance.now()));
      document.documentElement.dataset.ready = "true";
    });
  });
}

if (data.channels.length > 0) showChannel(0);
else {
  channelSection.replaceChildren(el("p", { class: "muted" }, "No segments and no messages."));
  document.documentElement.dataset.ready = "true";
}
