/**
 * A scrolling list of fixed-height rows that holds in the DOM only the rows in view (and a few
 * around them), so that a channel with tens of thousands of segments scrolls as lightly as one
 * with ten.
 */
export class VirtualList {
  private readonly inner: HTMLElement;
  private readonly rendered = new Map<number, HTMLElement>();
  private scheduled = false;
  /** The viewport's height, as set here: reading it back would make the browser lay out. */
  private height = 0;

  constructor(
    private readonly viewport: HTMLElement,
    private readonly rowHeight: number,
    private count: number,
    private readonly renderRow: (index: number) => HTMLElement,
    private readonly visibleRows: number,
  ) {
    viewport.classList.add("virtual");
    this.inner = document.createElement("div");
    this.inner.style.position = "relative";
    viewport.replaceChildren(this.inner);
    viewport.addEventListener("scroll", () => this.schedule());
    this.setCount(count);
  }

  /**
   * Shows `count` rows instead (after a change of which rows there are), from the top unless
   * `keepScroll` (rows folded or unfolded in place).
   */
  setCount(count: number, keepScroll = false): void {
    this.count = count;
    this.height = Math.min(count, this.visibleRows) * this.rowHeight;
    this.viewport.style.height = `${this.height + 2}px`;
    this.inner.style.height = `${count * this.rowHeight}px`;
    if (!keepScroll) this.viewport.scrollTop = 0;
    for (const row of this.rendered.values()) row.remove();
    this.rendered.clear();
    this.update(keepScroll ? this.viewport.scrollTop : 0);
  }

  /** Renders the rows again (after a change of what they show, such as the selection). */
  refresh(): void {
    for (const row of this.rendered.values()) row.remove();
    this.rendered.clear();
    this.update();
  }

  /** Scrolls so that row `index` is in view. */
  reveal(index: number): void {
    const top = index * this.rowHeight;
    const { scrollTop } = this.viewport;
    if (top < scrollTop) this.viewport.scrollTop = top;
    else if (top + this.rowHeight > scrollTop + this.height) {
      this.viewport.scrollTop = top + this.rowHeight - this.height;
    }
    this.update();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.update();
    });
  }

  private update(scrollTop = this.viewport.scrollTop): void {
    const overscan = 8;
    const from = Math.max(0, Math.floor(scrollTop / this.rowHeight) - overscan);
    const visible = Math.ceil(this.height / this.rowHeight);
    const to = Math.min(this.count, from + visible + 2 * overscan);
    for (const [index, row] of this.rendered) {
      if (index >= from && index < to) continue;
      row.remove();
      this.rendered.delete(index);
    }
    for (let index = from; index < to; index++) {
      if (this.rendered.has(index)) continue;
      const row = this.renderRow(index);
      row.style.position = "absolute";
      row.style.top = `${index * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      row.style.left = "0";
      row.style.right = "0";
      this.inner.appendChild(row);
      this.rendered.set(index, row);
    }
  }
}
