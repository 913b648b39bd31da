// @ts-check
// The model's Markdown, drawn safely: markdown-it with raw HTML off turns it into HTML, DOMPurify cleans that
// before it touches the page (text from the model or a tool never becomes markup any other way). Code blocks
// get a copy button and highlighting (highlight.js, fetched with the first code block); mermaid blocks are
// drawn as diagrams by mermaid, fetched only when an answer contains one. Every library is served from our
// own assets (/vendor, copied from npm by scripts/vendor-assets.mjs).

/** Where the libraries are; a variable, so the type checker does not read the vendored files. */
const VENDOR = "/vendor";

/**
 * @typedef {{ render(text: string): string, validateLink(url: string): boolean }} MarkdownIt
 * @typedef {{ sanitize(html: string, config?: Record<string, unknown>): string, addHook(name: string, hook: (node: Element) => void): void }} Purifier
 * @typedef {{ highlightElement(element: HTMLElement): void, getLanguage(name: string): unknown }} Highlighter
 * @typedef {{ initialize(config: Record<string, unknown>): void, render(id: string, text: string): Promise<{ svg: string }> }} Mermaid
 */

/** @type {Promise<{ md: MarkdownIt, purify: Purifier }>} */
const parser = Promise.all([
  import(`${VENDOR}/markdown-it/markdown-it.min.mjs`),
  import(`${VENDOR}/dompurify/purify.es.mjs`),
]).then(([markdownIt, dompurify]) => {
  // Raw HTML off: `<script>` in the text is shown as text. Links are made from URLs, quotes stay straight.
  const md = markdownIt.default({ html: false, linkify: true, breaks: false });
  /** @type {Purifier} */
  const purify = dompurify.default;
  // Links leave the console in a new tab, telling the other site nothing.
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.getAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
  return { md, purify };
});

/** Resolves once Markdown can be drawn (the page draws the conversation after it). */
export const markdownReady = parser.then(() => undefined);

/** @type {{ md: MarkdownIt, purify: Purifier } | null} */
let loaded = null;
parser.then((libraries) => {
  loaded = libraries;
});

/** @type {Promise<Highlighter> | null} */
let highlighter = null;
/** @type {Promise<Mermaid> | null} */
let mermaid = null;
let diagrams = 0;

/** The page redraws a conversation often: a text's sanitised HTML and a diagram's SVG are made once each. */
const CACHE_ENTRIES = 200;
/** @type {Map<string, string>} */
const htmlCache = new Map();
/** @type {Map<string, string>} */
const svgCache = new Map();

/** @param {Map<string, string>} cache @param {string} key @param {string} value */
function remember(cache, key, value) {
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value);
  cache.set(key, value);
  return value;
}

/** The page's color scheme now (diagrams are drawn to match it). */
function dark() {
  return window.matchMedia("(prefers-color-scheme: dark)").matches;
}

function loadHighlighter() {
  highlighter ??= import(`${VENDOR}/highlight/highlight.min.js`).then((module) => module.default);
  return highlighter;
}

/** mermaid's one-file build, added as a script of our own origin (the CSP allows nothing else). */
function loadMermaid() {
  mermaid ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = `${VENDOR}/mermaid/mermaid.min.js`;
    script.onload = () => {
      /** @type {Mermaid} */
      const library = /** @type {any} */ (window).mermaid;
      // strict: no click handlers or HTML in labels; labels as SVG text, so the sanitiser keeps them.
      library.initialize({
        startOnLoad: false,
        securityLevel: "strict",
        htmlLabels: false,
        flowchart: { htmlLabels: false },
        // A diagram it cannot read throws, and leaves no error graphic of its own in the page.
        suppressErrorRendering: true,
        theme: dark() ? "dark" : "default",
      });
      resolve(library);
    };
    script.onerror = () => reject(new Error("The diagram library could not be loaded."));
    document.head.append(script);
  });
  return mermaid;
}

/**
 * Draws `text` as Markdown into `target` (replacing what was there). Before the libraries have loaded, the
 * text is shown as it is. `live`: text still streaming in, drawn often, so code stays plain and diagrams wait.
 * @param {HTMLElement} target
 * @param {string} text
 * @param {{ live?: boolean }} [options]
 */
export function renderMarkdown(target, text, options = {}) {
  target.classList.add("markdown");
  if (!loaded) {
    target.textContent = text;
    return;
  }
  const html =
    htmlCache.get(text) ??
    remember(htmlCache, text, loaded.purify.sanitize(loaded.md.render(text), { USE_PROFILES: { html: true } }));
  // The sanitiser's output goes in through a template, never a live element, so nothing runs while parsing.
  const template = document.createElement("template");
  template.innerHTML = html;
  target.replaceChildren(template.content);
  if (!options.live) decorate(target);
}

/** Copy buttons and highlighting for code blocks; mermaid blocks become diagrams. */
function decorate(root) {
  for (const code of root.querySelectorAll("pre > code")) {
    const pre = /** @type {HTMLElement} */ (code.parentElement);
    const language = /language-([\w-]+)/.exec(code.className)?.[1] ?? "";
    if (language === "mermaid") {
      void drawDiagram(pre, code.textContent ?? "");
      continue;
    }
    pre.classList.add("code-block");
    pre.prepend(copyButton(code));
    if (language) {
      void loadHighlighter().then((hljs) => {
        if (hljs.getLanguage(language)) hljs.highlightElement(/** @type {HTMLElement} */ (code));
      });
    }
  }
  for (const table of root.querySelectorAll("table")) {
    // A wide table scrolls inside its own box, never the page; the box takes focus, so the keyboard scrolls it too.
    const box = document.createElement("div");
    box.className = "table-box";
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Table");
    table.replaceWith(box);
    box.append(table);
  }
}

/** @param {Element} code */
function copyButton(code) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy quiet";
  button.textContent = "Copy";
  button.setAttribute("aria-label", "Copy the code");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(code.textContent ?? "");
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => {
      button.textContent = "Copy";
    }, 1500);
  });
  return button;
}

/**
 * Replaces a mermaid code block with its diagram (SVG, through the sanitiser); a diagram mermaid cannot read
 * stays a code block, with the reason beside it.
 * @param {HTMLElement} pre
 * @param {string} source
 */
async function drawDiagram(pre, source) {
  const figure = document.createElement("figure");
  figure.className = "diagram";
  figure.setAttribute("aria-busy", "true");
  figure.append(pre.cloneNode(true));
  pre.replaceWith(figure);
  const id = `diagram-${++diagrams}`;
  try {
    let clean = svgCache.get(source);
    if (clean === undefined) {
      const library = await loadMermaid();
      const { svg } = await library.render(id, source);
      if (!loaded) return;
      clean = remember(
        svgCache,
        source,
        loaded.purify.sanitize(svg, { USE_PROFILES: { svg: true, svgFilters: true } }),
      );
    }
    const template = document.createElement("template");
    template.innerHTML = clean;
    figure.replaceChildren(template.content);
    figure.setAttribute("role", "img");
    figure.setAttribute("aria-label", `Diagram: ${source.split("\n")[0].trim()}`);
  } catch (error) {
    // What mermaid left in the page while it tried.
    document.getElementById(`d${id}`)?.remove();
    document.getElementById(id)?.remove();
    const note = document.createElement("figcaption");
    note.className = "error";
    note.textContent = `This diagram could not be drawn: ${error instanceof Error ? error.message : String(error)}`;
    figure.append(note);
  } finally {
    figure.removeAttribute("aria-busy");
  }
}
