// The `pii` guardrail's detectors: emails, phone numbers, payment cards (Luhn-checked), IBANs (mod-97 checked),
// national ids of a documented list, and IP addresses. Tested patterns with checksums rather than a library: the
// npm detectors that exist either pull Node built-ins, weigh megabytes of locale data, or match without checksums
// (docs/guardrails.md says which were looked at). Each finder prefers to miss a doubtful look-alike (a date, a
// plain run of digits, a card number failing its check) over replacing what is not personal data.
import type { PiiEntity } from "./guardrail-config";
import { type Span, spansOf } from "./guardrail-span";

const EMAIL = /(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])/g;

/**
 * A phone number: an international one (`+` and a country code) or a national one in a common written shape
 * (`(555) 123-4567`, `555-123-4567`, `020 7946 0958`, `06 12 34 56 78`); 8 to 15 digits.
 */
const PHONE =
  /(?=[+(\d])(?<![\w+.-])(?:\+\d{8,15}|(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d{1,5}(?:[\s.-]\d{1,5}){0,5})(?![\w-]|\.\d)/g;
const DATE_SHAPE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4})$/;
const NANP_SHAPE = /^\d{3}[\s.-]\d{3}[\s.-]\d{4}$/;

function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  if (digits.length < 8 || digits.length > 15) return false;
  if (DATE_SHAPE.test(candidate)) return false;
  if (candidate.startsWith("+")) return true;
  if (candidate.startsWith("(")) return /[\s.-]/.test(candidate.slice(candidate.indexOf(")")));
  // A national number without a country code: a trunk prefix (0...) in groups, or the North American 3-3-4 shape.
  // A bare run of digits (an order number, an amount) is not taken.
  if (!/[\s.-]/.test(candidate)) return false;
  return candidate.startsWith("0") || NANP_SHAPE.test(candidate);
}

const CARD = /(?=\d)(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function isCard(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  return digits.length >= 13 && digits.length <= 19 && !/^0+$/.test(digits) && luhnValid(digits);
}

/** IBAN lengths of the countries that use one most (an IBAN of a country not listed needs only its check digits). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AT: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  ES: 24,
  FI: 18,
  FR: 27,
  GB: 22,
  GI: 23,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MT: 31,
  NL: 18,
  NO: 15,
  PL: 28,
  PT: 25,
  QA: 29,
  RO: 24,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TR: 26,
};

/** An IBAN written compact or in groups of four (`DE89 3704 0044 0532 0130 00`). */
const IBAN =
  /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)(?![A-Za-z0-9])/g;

export function ibanValid(compact: string): boolean {
  if (compact.length < 15 || compact.length > 34) return false;
  const expected = IBAN_LENGTHS[compact.slice(0, 2)];
  if (expected !== undefined && expected !== compact.length) return false;
  const moved = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const char of moved) {
    const value = char >= "A" && char <= "Z" ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** An IBAN in groups may have taken a following word as its last group: it is tried without it too. */
function ibanSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const match of text.matchAll(IBAN)) {
    const start = match.index ?? 0;
    let candidate = match[0];
    for (let tries = 0; tries < 3 && candidate.length >= 15; tries++) {
      if (ibanValid(candidate.replace(/ /g, ""))) {
        out.push({ start, end: start + candidate.length, type: "iban" });
        break;
      }
      const lastSpace = candidate.lastIndexOf(" ");
      if (lastSpace < 0) break;
      candidate = candidate.slice(0, lastSpace);
    }
  }
  return out;
}

/** US Social Security numbers (`123-45-6789`), without the never-issued ranges (000, 666, 9xx; group 00; serial 0000). */
const US_SSN = /\b(?<!-)(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g;
/** UK National Insurance numbers (`QQ 12 34 56 C`), without the prefixes never used. */
const UK_NINO = /\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g;
const NINO_UNUSED = new Set(["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"]);
/** Spanish DNI (`12345678Z`) and NIE (`X1234567L`), with their check letter. */
const ES_DNI = /\b([XYZ]?)(\d{7,8})-?([A-Z])(?![A-Za-z0-9])/g;
const DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";
/** Italian codice fiscale (`RSSMRA85T10A562S`), by its fixed shape. */
const IT_CF = /\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z](?![A-Za-z0-9])/g;

function ssnValid(match: RegExpMatchArray): boolean {
  const [, area = "", , group = "", serial = ""] = match;
  return area !== "000" && area !== "666" && !area.startsWith("9") && group !== "00" && serial !== "0000";
}

function dniValid(match: RegExpMatchArray): boolean {
  const [, prefix = "", digits = "", letter = ""] = match;
  if (prefix === "" && digits.length !== 8) return false;
  if (prefix !== "" && digits.length !== 7) return false;
  const number = Number(`${prefix === "" ? "" : "XYZ".indexOf(prefix)}${digits}`);
  return DNI_LETTERS[number % 23] === letter;
}

function nationalIdSpans(text: string): Span[] {
  return [
    ...spansOf(text, US_SSN, "national_id", ssnValid),
    ...spansOf(text, UK_NINO, "national_id", (m) => !NINO_UNUSED.has(m[1] ?? "")),
    ...spansOf(text, ES_DNI, "national_id", dniValid),
    ...spansOf(text, IT_CF, "national_id"),
  ];
}

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`\\b(?<!\\.)${OCTET}(?:\\.${OCTET}){3}(?![\\d]|\\.\\d)`, "g");
const IPV6_CANDIDATE = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;

/** Eight groups of 1 to 4 hex digits, or fewer with one `::`; at least two groups written (not a bare `::1`). */
export function ipv6Valid(candidate: string): boolean {
  const halves = candidate.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  if (!groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  if (halves.length === 1) return groups.length === 8;
  return groups.length >= 2 && groups.length <= 7;
}

const FINDERS: Record<PiiEntity, (text: string) => Span[]> = {
  // A text without `@` has no address (a substring test is far cheaper than the regex's walk).
  email: (text) => (text.includes("@") ? spansOf(text, EMAIL, "email") : []),
  phone: (text) => spansOf(text, PHONE, "phone", (m) => isPhone(m[0])),
  card: (text) => spansOf(text, CARD, "card", (m) => isCard(m[0])),
  iban: ibanSpans,
  national_id: nationalIdSpans,
  // An IPv4 address has dots and an IPv6 one colons: a text without them is not searched.
  ip: (text) => [
    ...(text.includes(".") ? spansOf(text, IPV4, "ip") : []),
    ...(text.includes(":") ? spansOf(text, IPV6_CANDIDATE, "ip", (m) => ipv6Valid(m[0])) : []),
  ],
};

/** Settling overlaps prefers the earlier, longer find; among equal ones, this order (a card is not a phone). */
export const PII_ORDER: readonly PiiEntity[] = ["email", "card", "iban", "national_id", "ip", "phone"];

/** The personal data in `text` of the entities asked for (overlaps not yet settled). */
export function detectPii(text: string, entities: readonly PiiEntity[]): Span[] {
  return PII_ORDER.filter((entity) => entities.includes(entity)).flatMap((entity) => FINDERS[entity](text));
}
