// @ts-check
// The status line under the conversation: what the page says to the person, and how an error reads there.
import { ApiError } from "./api.js";
import { el } from "./elements.js";

/** @param {string} text @param {boolean} [isError] */
export function say(text, isError = false) {
  el.statusLine.textContent = text;
  el.statusLine.classList.toggle("error", isError);
}

/** @param {unknown} error */
export function describe(error) {
  return error instanceof ApiError ? error.message : "The server could not be reached; try again.";
}
