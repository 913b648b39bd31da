// The view follows the conversation as a chat app's does: while the reader is at its end (its last line just above
// the message box, which stays at the bottom of the window), new messages and a streaming answer keep it there; once
// they scroll up to read, it stays where they are, and a "Jump to latest" button offers the way back. Opening a
// conversation shows its end. The end is the conversation's, not the page's: on a phone the modes panel comes after.
// What scrolls is the conversation pane on a wide screen (the page stays), the page itself on a phone.

/** How close to the bottom (px) still counts as at the bottom: a line's worth of slack. */
const SLACK_PX = 48;

/**
 * Follows `watched` (the conversation, the streaming answer) as it grows.
 * @param {Element[]} watched
 * @param {HTMLButtonElement} jump the "Jump to latest" button, shown while the reader is away from new content
 * @param {() => Element | null} latest the element holding the newest content (the streaming answer, the last message)
 * @param {Element} lastLine the conversation's last line (the status line): at its end, it sits just above the bar
 * @param {Element} bar the message box, fixed to the window's bottom while the conversation scrolls
 * @param {HTMLElement} pane the conversation pane, which scrolls when the stylesheet lets it (a wide screen)
 */
export function followConversation(watched, jump, latest, lastLine, bar, pane) {
  const whole = document.scrollingElement ?? document.documentElement;
  /** What scrolls the conversation now: the pane, or on a phone the page. */
  const scroller = () => (["auto", "scroll"].includes(getComputedStyle(pane).overflowY) ? pane : whole);
  /** How far the conversation's end is below the message box's top (≤ 0: in view). */
  const below = () => lastLine.getBoundingClientRect().bottom - bar.getBoundingClientRect().top;
  const atBottom = () => below() <= SLACK_PX;
  const scrollToEnd = () => {
    scroller().scrollTop += below();
  };
  let following = true;
  let pending = false;
  /** @type {(() => Element | null) | null} The message a search opened, kept in view across redraws. */
  let held = null;
  // The reader's own scrolling lets go of that message.
  for (const event of ["wheel", "touchmove"]) window.addEventListener(event, () => (held = null), { passive: true });
  const toEnd = () => {
    held = null;
    following = true;
    jump.hidden = true;
    scrollToEnd();
  };
  // Only the reader moving up stops the following, and reaching the end again resumes it. A scroll event of our own
  // (to the end) can arrive after the content grew again: it is not the reader moving up, so it changes nothing.
  let lastTop = scroller().scrollTop;
  let lastHeight = scroller().scrollHeight;
  const scrolled = () => {
    const top = scroller().scrollTop;
    const height = scroller().scrollHeight;
    if (atBottom()) {
      following = true;
      jump.hidden = true;
    } else if (top < lastTop && height >= lastHeight) {
      following = false;
    }
    lastTop = top;
    lastHeight = height;
  };
  window.addEventListener("scroll", scrolled, { passive: true });
  pane.addEventListener("scroll", scrolled, { passive: true });
  const grown = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (held) held()?.scrollIntoView({ block: "center" });
      else if (following) scrollToEnd();
      // Offered only when what grew is out of sight below (earlier messages drawn above are not "latest").
      else if ((latest()?.getBoundingClientRect().bottom ?? 0) > bar.getBoundingClientRect().top) jump.hidden = false;
    });
  };
  const observer = new MutationObserver(grown);
  for (const element of watched) {
    observer.observe(element, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ["hidden"],
    });
  }
  jump.addEventListener("click", () => {
    toEnd();
    jump.blur();
  });
  return {
    /** A conversation was opened: its end is shown, and followed. */
    opened() {
      requestAnimationFrame(toEnd);
    },
    /**
     * The reader was taken to a message further up (a search's): the view stays there, as if they scrolled, and a
     * redraw meanwhile (the socket's first frames redraw the conversation) brings that message back into view until
     * the reader scrolls themselves or `release` is called.
     * @param {() => Element | null} anchor the message to keep in view
     */
    hold(anchor) {
      following = false;
      held = anchor;
    },
    release() {
      held = null;
    },
  };
}
